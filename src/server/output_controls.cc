#include "server/output_controls.h"

#include <charconv>

#include "base/field_error.h"
#include "grammar/grammar.h"
#include "grammar/grammar_cache.h"
#include "text/template_json.h"

namespace qvl {
namespace {

constexpr int kMaxChoices = 128;
constexpr int kMaxTools = 128;
// Compiled grammars kept for schemas sent again (clients send the same one with every
// request): each keeps its automaton and token masks warm. A few MB each, 100 MB at worst.
constexpr size_t kCachedGrammars = 16;

GrammarCache& CompiledGrammars() {
  static GrammarCache cache(kCachedGrammars);
  return cache;
}

// The top-level "tools" and "response_format" of the body with their keys in the order
// the client wrote them (the checked parse before sorted them).
nlohmann::ordered_json OrderedFields(std::string_view text) {
  const nlohmann::ordered_json::parser_callback_t keep =
      [](int depth, nlohmann::ordered_json::parse_event_t event, nlohmann::ordered_json& parsed) {
        if (depth == 1 && event == nlohmann::ordered_json::parse_event_t::key) {
          return parsed == "tools" || parsed == "response_format";
        }
        return true;
      };
  return nlohmann::ordered_json::parse(text.begin(), text.end(), keep, /*allow_exceptions=*/false);
}

// A schema error's path inside the request: "response_format.json_schema.schema" +
// "properties.x.pattern".
[[noreturn]] void RethrowUnder(const FieldError& e, std::string_view prefix) {
  const std::string detail = e.field().empty() ? e.what() : e.what() + e.field().size() + 2;
  FailField(e.code(), e.field().empty() ? std::string(prefix) : JoinField(prefix, e.field()),
            detail);
}

void ParseLogitBias(const RequestObject& body, std::vector<LogitBias>* out) {
  const nlohmann::json* bias = body.Find("logit_bias");
  if (bias == nullptr) return;
  const RequestObject object(*bias, "logit_bias");
  for (const auto& [key, value] : bias->items()) {
    const std::string field = object.Field(key);
    int32_t token = -1;
    const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), token);
    if (error != std::errc() || end != key.data() + key.size() || token < 0) {
      FailField(ErrorCode::kInvalidArgument, field, "keys must be token ids, got \"", key, "\"");
    }
    if (!value.is_number()) {
      FailField(ErrorCode::kInvalidArgument, field, "expected a number, got ", JsonKind(value));
    }
    out->push_back({token, value.get<float>()});
  }
}

// Null for plain text; sets `structured` for JSON output.
std::shared_ptr<const Grammar> ParseResponseFormat(const RequestObject& body,
                                                   const nlohmann::ordered_json& ordered,
                                                   bool* structured) {
  const nlohmann::json* format = body.Find("response_format");
  if (format == nullptr) return nullptr;
  const RequestObject response_format(*format, "response_format");
  const std::string type = response_format.String("type").value_or("text");
  if (type == "text") return nullptr;
  *structured = true;
  if (type == "json_object") return JsonObjectGrammar();
  if (type != "json_schema") {
    FailField(ErrorCode::kInvalidArgument, "response_format.type", "\"", type,
              "\" is not one of text, json_object, json_schema");
  }
  const nlohmann::json* spec = response_format.Find("json_schema");
  if (spec == nullptr) {
    FailField(ErrorCode::kInvalidArgument, "response_format.json_schema",
              "is required when type is \"json_schema\"");
  }
  const RequestObject json_schema(*spec, "response_format.json_schema");
  json_schema.String("name");
  json_schema.Bool("strict");
  if (json_schema.Find("schema") == nullptr)
    return CompileJsonSchema(nlohmann::ordered_json::object());
  const nlohmann::ordered_json& schema = ordered["response_format"]["json_schema"]["schema"];
  try {
    return CompiledGrammars().Get("schema:" + schema.dump(),
                                  [&] { return CompileJsonSchema(schema); });
  } catch (const FieldError& e) {
    RethrowUnder(e, "response_format.json_schema.schema");
  }
}

struct Tools {
  std::vector<ToolSchema> schemas;
  std::vector<std::string> json;  // as the template shows them
};

Tools ParseTools(const nlohmann::json& tools, const nlohmann::ordered_json& ordered) {
  RequireArray(tools, "tools");
  if (tools.size() > kMaxTools) {
    FailField(ErrorCode::kInvalidArgument, "tools", "at most ", kMaxTools,
              " tools are supported, got ", tools.size());
  }
  Tools out;
  for (size_t i = 0; i < tools.size(); ++i) {
    const RequestObject tool(tools[i], IndexField("tools", i));
    const std::string type = tool.String("type").value_or("function");
    if (type != "function") {
      FailField(ErrorCode::kInvalidArgument, tool.Field("type"), "\"", type,
                "\" is not supported; only \"function\" tools are");
    }
    const nlohmann::json* function_value = tool.Find("function");
    if (function_value == nullptr) {
      FailField(ErrorCode::kInvalidArgument, tool.Field("function"), "is required");
    }
    const RequestObject function(*function_value, tool.Field("function"));
    ToolSchema schema;
    schema.name = function.RequiredString("name");
    if (schema.name.empty() || schema.name.size() > 64 ||
        schema.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789_-.") != std::string::npos) {
      FailField(ErrorCode::kInvalidArgument, function.Field("name"),
                "must be 1 to 64 letters, digits, '_', '-' or '.', got \"", schema.name, "\"");
    }
    for (const ToolSchema& earlier : out.schemas) {
      if (earlier.name == schema.name) {
        FailField(ErrorCode::kInvalidArgument, function.Field("name"), "\"", schema.name,
                  "\" is defined twice");
      }
    }
    function.String("description");
    function.Bool("strict");
    const nlohmann::ordered_json& ordered_tool = ordered["tools"][i];
    if (function.Find("parameters") != nullptr) {
      schema.parameters = ordered_tool["function"]["parameters"];
      schema.parameters_path = function.Field("parameters");
      // Checked for every tool, called or not: a schema qvl could not constrain to is
      // refused whatever tool_choice says.
      try {
        CompiledGrammars().Get("schema:" + schema.parameters.dump(),
                               [&] { return CompileJsonSchema(schema.parameters); });
      } catch (const FieldError& e) {
        RethrowUnder(e, schema.parameters_path);
      }
    }
    out.json.push_back(TemplateJson(ordered_tool));
    out.schemas.push_back(std::move(schema));
  }
  return out;
}

}  // namespace

OutputControls ParseOutputControls(const RequestObject& body, std::string_view text,
                                   GenerationRequest* g) {
  OutputControls out;
  if (auto n = body.Int("n", 1, kMaxChoices)) g->n = static_cast<int>(*n);
  ParseLogitBias(body, &g->logit_bias);
  for (const char* key : {"functions", "function_call"}) {
    if (body.Find(key) != nullptr) {
      FailField(ErrorCode::kInvalidArgument, key, "is the deprecated form of ",
                key[8] == 's' ? "\"tools\"" : "\"tool_choice\"", "; send that instead");
    }
  }
  const nlohmann::json* tools = body.Find("tools");
  const bool has_tools = tools != nullptr && !(tools->is_array() && tools->empty());
  const bool needs_order = has_tools || body.Find("response_format") != nullptr;
  const nlohmann::ordered_json ordered =
      needs_order ? OrderedFields(text) : nlohmann::ordered_json();
  bool structured = false;
  g->grammar = ParseResponseFormat(body, ordered, &structured);

  std::string choice = has_tools ? "auto" : "none";
  std::string named;
  if (const nlohmann::json* tool_choice = body.Find("tool_choice")) {
    if (tool_choice->is_string()) {
      choice = tool_choice->get<std::string>();
      if (choice != "none" && choice != "auto" && choice != "required") {
        FailField(ErrorCode::kInvalidArgument, "tool_choice", "\"", choice,
                  "\" is not one of none, auto, required, or {\"type\": \"function\", "
                  "\"function\": {\"name\": ...}}");
      }
    } else {
      const RequestObject object(*tool_choice, "tool_choice");
      const nlohmann::json* function = object.Find("function");
      if (function == nullptr) {
        FailField(ErrorCode::kInvalidArgument, object.Field("function"), "is required");
      }
      named = RequestObject(*function, object.Field("function")).RequiredString("name");
      choice = "named";
    }
    if (choice != "none" && !has_tools) {
      FailField(ErrorCode::kInvalidArgument, "tool_choice", "needs \"tools\"");
    }
  }
  const bool parallel = body.Bool("parallel_tool_calls").value_or(true);
  if (!has_tools || choice == "none") return out;

  Tools parsed = ParseTools(*tools, ordered);
  g->tools_json = std::move(parsed.json);
  out.parse_tool_calls = true;
  if (choice == "auto") return out;
  if (structured) {
    FailField(ErrorCode::kInvalidArgument, "response_format",
              "cannot be combined with tool_choice \"", choice == "named" ? named : choice,
              "\": the answer is a tool call");
  }
  std::vector<ToolSchema> callable;
  for (ToolSchema& schema : parsed.schemas) {
    if (choice == "required" || schema.name == named) callable.push_back(std::move(schema));
  }
  if (callable.empty()) {
    FailField(ErrorCode::kInvalidArgument, "tool_choice.function.name", "\"", named,
              "\" is not one of the tools");
  }
  const bool parallel_calls = parallel && choice == "required";
  std::string key = StrCat("tools:", parallel_calls);
  for (const ToolSchema& tool : callable)
    key += StrCat("\n", tool.name, "\n", tool.parameters.dump());
  g->grammar =
      CompiledGrammars().Get(key, [&] { return CompileToolCallGrammar(callable, parallel_calls); });
  return out;
}

}  // namespace qvl
