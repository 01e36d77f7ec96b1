// CompileToolCallGrammar (grammar.h): Qwen3's tool call blocks around JSON arguments.
#include "base/field_error.h"
#include "grammar/grammar.h"
#include "grammar/grammar_rules.h"
#include "grammar/json_rules.h"
#include "grammar/schema_compiler.h"

namespace qvl {
namespace {

std::string JsonString(const std::string& text, const std::string& path) {
  try {
    return nlohmann::ordered_json(text).dump();
  } catch (const nlohmann::json::exception&) {
    FailField(ErrorCode::kInvalidArgument, path, "is not valid UTF-8");
  }
}

}  // namespace

std::shared_ptr<const Grammar> CompileToolCallGrammar(std::span<const ToolSchema> tools,
                                                      bool parallel) {
  if (tools.empty()) FailField(ErrorCode::kInvalidArgument, "tools", "no tool to call");
  grammar::GrammarBuilder builder;
  grammar::JsonRules rules(&builder);
  std::vector<grammar::Sequence> calls;
  std::vector<nlohmann::ordered_json> schemas;
  schemas.reserve(tools.size());  // compilers keep references into it
  for (size_t i = 0; i < tools.size(); ++i) {
    const ToolSchema& tool = tools[i];
    const std::string path = !tool.parameters_path.empty()
                                 ? tool.parameters_path
                                 : StrCat("tools[", i, "].function.parameters");
    try {
      schemas.push_back(tool.parameters);
    } catch (const nlohmann::json::exception& e) {
      FailField(ErrorCode::kInvalidArgument, path, "not valid JSON text: ", e.what());
    }
    nlohmann::ordered_json& schema = schemas.back();
    // No parameters, or {}: any object (arguments are always an object).
    grammar::Sequence arguments;
    if (schema.is_null() || (schema.is_object() && schema.empty())) {
      arguments = rules.Object();
    } else {
      if (schema.is_object() && !schema.contains("type")) schema["type"] = "object";
      if (!schema.is_object() || schema["type"] != "object") {
        FailField(ErrorCode::kInvalidArgument, path,
                  "function parameters must be an object schema");
      }
      grammar::SchemaCompiler compiler(rules, schema, path);
      arguments = compiler.CompileRoot();
    }
    calls.push_back(grammar::Concat(
        {builder.Literal("<tool_call>\n{\"name\": "),
         builder.Literal(JsonString(tool.name, StrCat("tools[", i, "].function.name"))),
         builder.Literal(", \"arguments\": "), arguments, builder.Literal("}\n</tool_call>")}));
  }
  grammar::Sequence call = builder.Shared(builder.Alt(std::move(calls)));
  grammar::Sequence root =
      parallel
          ? grammar::Concat({call, builder.Star(grammar::Concat({builder.Literal("\n"), call}))})
          : call;
  return builder.Build(std::move(root));
}

}  // namespace qvl
