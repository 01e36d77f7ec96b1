// The grammars of grammar.h made from one value (a schema, a pattern, choices):
// CompileJsonSchema, JsonObjectGrammar, CompileRegex and CompileChoice.
#include "base/field_error.h"
#include "grammar/grammar.h"
#include "grammar/grammar_rules.h"
#include "grammar/json_rules.h"
#include "grammar/pattern_grammar.h"
#include "grammar/schema_compiler.h"

namespace qvl {
std::shared_ptr<const Grammar> CompileJsonSchema(const nlohmann::ordered_json& schema) {
  grammar::GrammarBuilder builder;
  grammar::JsonRules rules(&builder);
  grammar::SchemaCompiler compiler(rules, schema, "");
  try {
    grammar::Sequence root = compiler.CompileRoot();
    return builder.Build(std::move(root));
  } catch (const nlohmann::json::exception& e) {
    // Only a document built in code, not one parsed from text, can hold invalid UTF-8.
    FailField(ErrorCode::kInvalidArgument, "", "the schema is not valid JSON text: ", e.what());
  }
}

std::shared_ptr<const Grammar> CompileJsonSchema(const nlohmann::json& schema) {
  nlohmann::ordered_json ordered;
  try {
    ordered = nlohmann::ordered_json::parse(schema.dump());
  } catch (const nlohmann::json::exception& e) {
    FailField(ErrorCode::kInvalidArgument, "", "the schema is not valid JSON text: ", e.what());
  }
  return CompileJsonSchema(ordered);
}

std::shared_ptr<const Grammar> JsonObjectGrammar() {
  static const std::shared_ptr<const Grammar> grammar = [] {
    grammar::GrammarBuilder builder;
    grammar::JsonRules rules(&builder);
    return builder.Build(rules.Object());
  }();
  return grammar;
}

std::shared_ptr<const Grammar> CompileRegex(std::string_view pattern) {
  grammar::GrammarBuilder builder;
  grammar::JsonRules rules(&builder);
  return builder.Build(grammar::PatternText(rules, pattern, ""));
}

std::shared_ptr<const Grammar> CompileChoice(std::span<const std::string> choices) {
  if (choices.empty()) FailField(ErrorCode::kInvalidArgument, "", "must list at least one choice");
  grammar::GrammarBuilder builder;
  std::vector<grammar::Sequence> alternatives;
  alternatives.reserve(choices.size());
  for (const std::string& choice : choices) alternatives.push_back(builder.Literal(choice));
  return builder.Build(builder.Alt(std::move(alternatives)));
}

}  // namespace qvl
