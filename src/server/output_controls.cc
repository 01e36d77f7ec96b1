#include "server/output_controls.h"

#include <charconv>
#include <optional>
#include <string>

#include "base/field_error.h"
#include "grammar/grammar.h"
#include "grammar/grammar_cache.h"
#include "text/template_json.h"

namespace qvl {
namespace {

constexpr int kMaxTools = 128;
// Compiled grammars kept for schemas sent again (clients send the same one with every
// request): each keeps its automaton and token masks warm. A few MB each, 100 MB at worst.
constexpr size_t kCachedGrammars = 16;

GrammarCache& CompiledGrammars() {
  static GrammarCache cache(kCachedGrammars);
  return cache;
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

// The top-level key that holds the format object: "response_format" or "text".
const char* FormatTopKey(const OutputShape& shape) {
  return *shape.format_parent != '\0' ? shape.format_parent : shape.format_key;
}

// The format object ("response_format", "text.format") as it was sent, or nullopt.
std::optional<RequestObject> FindFormat(const RequestObject& body, const OutputShape& shape) {
  const RequestObject* parent = &body;
  std::optional<RequestObject> parent_object;
  if (*shape.format_parent != '\0') {
    const nlohmann::json* value = body.Find(shape.format_parent);
    if (value == nullptr) return std::nullopt;
    parent = &parent_object.emplace(*value, shape.format_parent);
  }
  const nlohmann::json* format = parent->Find(shape.format_key);
  if (format == nullptr) return std::nullopt;
  return RequestObject(*format, parent->Field(shape.format_key));
}

const nlohmann::ordered_json& OrderedFormat(const nlohmann::ordered_json& ordered,
                                            const OutputShape& shape) {
  const nlohmann::ordered_json& top = ordered.at(FormatTopKey(shape));
  return *shape.format_parent != '\0' ? top.at(shape.format_key) : top;
}

// Null for plain text; sets `structured` for JSON output.
std::shared_ptr<const Grammar> ParseResponseFormat(const std::optional<RequestObject>& format,
                                                   const nlohmann::ordered_json& ordered,
                                                   const OutputShape& shape, bool* structured) {
  if (!format) return nullptr;
  const std::optional<std::string> sent_type = format->String("type");
  // Without a type the format is text, as in llama-server, unless it carries a schema,
  // which would otherwise be dropped while the client waits for JSON.
  if (!sent_type && (format->Find("schema") != nullptr ||
                     (*shape.json_schema_key != '\0' && format->Find(shape.json_schema_key)))) {
    FailField(ErrorCode::kInvalidArgument, format->Field("type"),
              "is required beside a schema; use \"json_schema\" (or \"json_object\")");
  }
  const std::string type = sent_type.value_or("text");
  if (type == "text") return nullptr;
  *structured = true;
  // llama-server's spellings: a schema beside either type, in the format object itself.
  const bool schema_beside = format->Find("schema") != nullptr;
  if (type == "json_object") {
    if (!schema_beside) return JsonObjectGrammar();
    return CompileSchemaAt(OrderedFormat(ordered, shape).at("schema"), format->Field("schema"));
  }
  if (type != "json_schema") {
    FailField(ErrorCode::kInvalidArgument, format->Field("type"), "\"", type,
              "\" is not one of text, json_object, json_schema");
  }
  const bool nested = *shape.json_schema_key != '\0' &&
                      !(schema_beside && format->Find(shape.json_schema_key) == nullptr);
  std::optional<RequestObject> nested_spec;
  const nlohmann::ordered_json* ordered_spec = &OrderedFormat(ordered, shape);
  if (nested) {
    const nlohmann::json* spec = format->Find(shape.json_schema_key);
    if (spec == nullptr) {
      FailField(ErrorCode::kInvalidArgument, format->Field(shape.json_schema_key),
                "is required when type is \"json_schema\"");
    }
    nested_spec.emplace(*spec, format->Field(shape.json_schema_key));
    ordered_spec = &ordered_spec->at(shape.json_schema_key);
  }
  const RequestObject& json_schema = nested ? *nested_spec : *format;
  if (nested || *shape.json_schema_key != '\0') {
    json_schema.String("name");
  } else {
    json_schema.RequiredString("name");
  }
  json_schema.Bool("strict");
  if (json_schema.Find("schema") == nullptr) {
    if (!nested) {
      FailField(ErrorCode::kInvalidArgument, json_schema.Field("schema"),
                "is required when type is \"json_schema\"");
    }
    return CompileJsonSchema(nlohmann::ordered_json::object());
  }
  return CompileSchemaAt(ordered_spec->at("schema"), json_schema.Field("schema"));
}

struct Tools {
  std::vector<ToolSchema> schemas;
  std::vector<std::string> json;  // as the template shows them
};

// A tool in chat's shape, which the template shows: {"type": "function", "function":
// {...the flat tool's other keys, in the client's order, its schema as "parameters"}}.
// Anthropic's cache_control marks where a prompt cache may end; it is no part of the tool.
nlohmann::ordered_json ChatShapedTool(const nlohmann::ordered_json& flat, const ToolShape& shape) {
  nlohmann::ordered_json function = nlohmann::ordered_json::object();
  for (const auto& [key, value] : flat.items()) {
    if (key == "type" || key == "cache_control") continue;
    function[key == shape.parameters_key ? "parameters" : key] = value;
  }
  return {{"type", "function"}, {"function", std::move(function)}};
}

Tools ParseTools(const nlohmann::json& tools, const nlohmann::ordered_json& ordered,
                 const ToolShape& shape) {
  RequireArray(tools, "tools");
  if (tools.size() > kMaxTools) {
    FailField(ErrorCode::kInvalidArgument, "tools", "at most ", kMaxTools,
              " tools are supported, got ", tools.size());
  }
  const bool nested = *shape.function_key != '\0';
  Tools out;
  for (size_t i = 0; i < tools.size(); ++i) {
    const RequestObject tool(tools[i], IndexField("tools", i));
    const std::string type = tool.String("type").value_or(shape.type);
    if (type != shape.type) {
      FailField(ErrorCode::kInvalidArgument, tool.Field("type"), "\"", type,
                "\" is not supported; only \"", shape.type, "\" tools are");
    }
    std::optional<RequestObject> nested_function;
    if (nested) {
      const nlohmann::json* function_value = tool.Find(shape.function_key);
      if (function_value == nullptr) {
        FailField(ErrorCode::kInvalidArgument, tool.Field(shape.function_key), "is required");
      }
      nested_function.emplace(*function_value, tool.Field(shape.function_key));
    }
    const RequestObject& function = nested ? *nested_function : tool;
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
    const nlohmann::ordered_json& ordered_tool = ordered.at("tools").at(i);
    const nlohmann::ordered_json& ordered_function =
        nested ? ordered_tool.at(shape.function_key) : ordered_tool;
    if (function.Find(shape.parameters_key) != nullptr) {
      schema.parameters = ordered_function.at(shape.parameters_key);
      schema.parameters_path = function.Field(shape.parameters_key);
      // Checked for every tool, called or not: a schema qvl could not constrain to is
      // refused whatever tool_choice says.
      CompileSchemaAt(schema.parameters, schema.parameters_path);
    }
    out.json.push_back(TemplateJson(nested ? ordered_tool : ChatShapedTool(ordered_tool, shape)));
    out.schemas.push_back(std::move(schema));
  }
  return out;
}

// tool_choice: "none", "auto", "required" or a function by name.
ToolChoice ParseToolChoice(const nlohmann::json& tool_choice, const ToolShape& shape) {
  const bool nested = *shape.function_key != '\0';
  ToolChoice out;
  if (tool_choice.is_string()) {
    out.spelled = tool_choice.get<std::string>();
    if (out.spelled == "none") {
      out.kind = ToolChoice::Kind::kNone;
    } else if (out.spelled == "required") {
      out.kind = ToolChoice::Kind::kRequired;
    } else if (out.spelled != "auto") {
      FailField(ErrorCode::kInvalidArgument, "tool_choice", "\"", out.spelled,
                "\" is not one of none, auto, required, or {\"type\": \"function\", ",
                nested ? "\"function\": {\"name\": ...}}" : "\"name\": ...}");
    }
    return out;
  }
  out.kind = ToolChoice::Kind::kNamed;
  const RequestObject object(tool_choice, "tool_choice");
  if (nested) {
    const nlohmann::json* function = object.Find(shape.function_key);
    if (function == nullptr) {
      FailField(ErrorCode::kInvalidArgument, object.Field(shape.function_key), "is required");
    }
    const RequestObject function_object(*function, object.Field(shape.function_key));
    out.name = out.spelled = function_object.RequiredString("name");
    out.name_field = function_object.Field("name");
    return out;
  }
  const std::string type = object.RequiredString("type");
  if (type != "function") {
    FailField(ErrorCode::kInvalidArgument, object.Field("type"), "\"", type,
              "\" is not supported; use none, auto, required, or {\"type\": \"function\", "
              "\"name\": ...}");
  }
  out.name = out.spelled = object.RequiredString("name");
  out.name_field = object.Field("name");
  return out;
}

}  // namespace

nlohmann::ordered_json OrderedRequestFields(std::string_view text, std::string_view format_key) {
  const nlohmann::ordered_json::parser_callback_t keep =
      [format_key](int depth, nlohmann::ordered_json::parse_event_t event,
                   nlohmann::ordered_json& parsed) {
        if (depth == 1 && event == nlohmann::ordered_json::parse_event_t::key) {
          return parsed == "tools" || parsed == format_key;
        }
        return true;
      };
  return nlohmann::ordered_json::parse(text.begin(), text.end(), keep, /*allow_exceptions=*/false);
}

std::shared_ptr<const Grammar> CompileSchemaAt(const nlohmann::ordered_json& schema,
                                               const std::string& field) {
  return CompileCachedAt(
      "schema:" + schema.dump(), [&] { return CompileJsonSchema(schema); }, field);
}

std::shared_ptr<const Grammar> CompileCachedAt(
    const std::string& key, const std::function<std::shared_ptr<const Grammar>()>& compile,
    const std::string& field) {
  try {
    return CompiledGrammars().Get(key, compile);
  } catch (const FieldError& e) {
    RethrowUnder(e, field);
  }
}

bool OfferTools(const RequestObject& body, const nlohmann::ordered_json& ordered,
                GenerationRequest* g) {
  const nlohmann::json* tools = body.Find("tools");
  if (tools == nullptr || (tools->is_array() && tools->empty())) return false;
  g->tools_json = ParseTools(*tools, ordered, kChatToolShape).json;
  return true;
}

bool OfferToolsUnder(const RequestObject& body, const nlohmann::ordered_json& ordered,
                     const ToolShape& shape, const ToolChoice& choice,
                     std::string_view format_field, GenerationRequest* g) {
  using Kind = ToolChoice::Kind;
  const nlohmann::json* tools = body.Find("tools");
  const bool has_tools = tools != nullptr && !(tools->is_array() && tools->empty());
  if (!has_tools) {
    // "auto" with no tools is plain text, as "none" is (vLLM takes it with "tools": []).
    if (choice.kind == Kind::kRequired || choice.kind == Kind::kNamed) {
      FailField(ErrorCode::kInvalidArgument, "tool_choice", "needs \"tools\"");
    }
    return false;
  }
  if (choice.kind == Kind::kNone) return false;
  Tools parsed = ParseTools(*tools, ordered, shape);
  g->tools_json = std::move(parsed.json);
  if (choice.kind == Kind::kAuto) return true;
  if (!format_field.empty()) {
    FailField(ErrorCode::kInvalidArgument, format_field, "cannot be combined with tool_choice \"",
              choice.spelled, "\": the answer is a tool call");
  }
  std::vector<ToolSchema> callable;
  for (ToolSchema& schema : parsed.schemas) {
    if (choice.kind == Kind::kRequired || schema.name == choice.name) {
      callable.push_back(std::move(schema));
    }
  }
  if (callable.empty()) {
    FailField(ErrorCode::kInvalidArgument, choice.name_field, "\"", choice.name,
              "\" is not one of the tools");
  }
  const bool parallel_calls = choice.parallel && choice.kind == Kind::kRequired;
  std::string key = StrCat("tools:", parallel_calls);
  for (const ToolSchema& tool : callable)
    key += StrCat("\n", tool.name, "\n", tool.parameters.dump());
  g->grammar =
      CompiledGrammars().Get(key, [&] { return CompileToolCallGrammar(callable, parallel_calls); });
  return true;
}

OutputControls ParseOutputControls(const RequestObject& body, std::string_view text,
                                   GenerationRequest* g, const OutputShape& shape) {
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
  const std::optional<RequestObject> format = FindFormat(body, shape);
  if (has_tools || body.Find(FormatTopKey(shape)) != nullptr) {
    out.ordered = OrderedRequestFields(text, FormatTopKey(shape));
  }
  bool structured = false;
  g->grammar = ParseResponseFormat(format, out.ordered, shape, &structured);
  ToolChoice choice;
  if (const nlohmann::json* tool_choice = body.Find("tool_choice")) {
    choice = ParseToolChoice(*tool_choice, shape.tools);
  }
  choice.parallel = body.Bool("parallel_tool_calls").value_or(true);
  out.parse_tool_calls =
      OfferToolsUnder(body, out.ordered, shape.tools, choice, structured ? format->path() : "", g);
  return out;
}

}  // namespace qvl
