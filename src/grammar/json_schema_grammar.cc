// CompileJsonSchema and JsonObjectGrammar (grammar.h).
#include "base/field_error.h"
#include "grammar/grammar.h"
#include "grammar/grammar_rules.h"
#include "grammar/json_rules.h"
#include "grammar/schema_compiler.h"

namespace qvl {
std::shared_ptr<const Grammar> CompileJsonSchema(const nlohmann::ordered_json& schema) {
  grammar::GrammarBuilder builder;
  grammar::JsonRules rules(&builder);
  grammar::SchemaCompiler compiler(rules, schema, "");
  grammar::Sequence root = compiler.CompileRoot();
  return builder.Build(std::move(root));
}

std::shared_ptr<const Grammar> CompileJsonSchema(const nlohmann::json& schema) {
  return CompileJsonSchema(nlohmann::ordered_json::parse(schema.dump()));
}

std::shared_ptr<const Grammar> JsonObjectGrammar() {
  static const std::shared_ptr<const Grammar> grammar = [] {
    grammar::GrammarBuilder builder;
    grammar::JsonRules rules(&builder);
    return builder.Build(rules.Object());
  }();
  return grammar;
}

}  // namespace qvl
