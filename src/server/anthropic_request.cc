#include "server/anthropic_request.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/field_error.h"
#include "engine/request_ranges.h"
#include "server/anthropic_input.h"
#include "server/generation_fields.h"
#include "server/media_fields.h"
#include "server/output_controls.h"
#include "server/request_fields.h"
#include "server/server_dialects.h"

namespace qvl {
namespace {

constexpr const char* kTokenLimitFields[] = {"max_tokens"};
// Anthropic's smallest reasoning budget.
constexpr int64_t kMinThinkingBudget = 1024;

// Features that run on Anthropic's side: refused rather than silently ignored.
void RefuseUnsupported(const RequestObject& body) {
  if (const nlohmann::json* servers = body.Find("mcp_servers");
      servers != nullptr && !(servers->is_array() && servers->empty())) {
    FailField(ErrorCode::kInvalidArgument, "mcp_servers",
              "is not supported: qvl connects to no MCP server; offer the server's tools as "
              "tools and call them yourself");
  }
  if (body.Find("container") != nullptr) {
    FailField(ErrorCode::kInvalidArgument, "container",
              "is not supported: qvl runs no code execution containers");
  }
  if (body.Find("context_management") != nullptr) {
    FailField(ErrorCode::kInvalidArgument, "context_management",
              "is not supported: qvl never edits the conversation; send what fits the context");
  }
}

// Fields that change nothing qvl does, checked so that a wrong one is still a 400.
void CheckIgnoredFields(const RequestObject& body) {
  if (const nlohmann::json* metadata = body.Find("metadata")) {
    RequestObject(*metadata, "metadata").String("user_id");
  }
  if (std::optional<std::string> tier = body.String("service_tier")) {
    if (*tier != "auto" && *tier != "standard_only") {
      FailField(ErrorCode::kInvalidArgument, "service_tier", "\"", *tier,
                "\" is not one of auto, standard_only");
    }
  }
}

// stop_sequences: chat's stop strings, under the same limits, as an array.
void ParseStopSequences(const RequestObject& body, int max_stop, std::vector<std::string>* stop) {
  const nlohmann::json* value = body.Find("stop_sequences");
  if (value == nullptr) return;
  RequireArray(*value, "stop_sequences");
  const nlohmann::json wrapped = {{"stop", *value}};
  try {
    ParseStopField(RequestObject(wrapped, ""), max_stop, stop);
  } catch (const FieldError& e) {
    // ParseStopField names the field it reads "stop" ("stop[1]").
    const std::string_view field = e.field();
    FailField(e.code(), StrCat("stop_sequences", field.substr(4)),
              std::string_view(e.what()).substr(field.size() + 2));
  }
}

// thinking must say what the served template does, as Ollama's "think" must: an Instruct
// model never thinks, a Thinking model's template always opens its reasoning.
// budget_tokens is checked as Anthropic checks it (below `max_tokens` when that is
// given, i.e. not 0) and returned as the reasoning budget; -1 without one.
int ParseThinking(const RequestObject& body, ChatTemplateKind chat_template, int max_tokens) {
  const nlohmann::json* value = body.Find("thinking");
  if (value == nullptr) return -1;
  const RequestObject thinking(*value, "thinking");
  const std::string type = thinking.RequiredString("type");
  if (type != "enabled" && type != "disabled" && type != "adaptive") {
    FailField(ErrorCode::kInvalidArgument, thinking.Field("type"), "\"", type,
              "\" is not one of enabled, disabled, adaptive");
  }
  int reasoning_budget = -1;
  if (type == "enabled") {
    const std::optional<int64_t> budget = thinking.Int(
        "budget_tokens", kMinThinkingBudget, static_cast<int64_t>(request_ranges::kMaxTokens.max));
    if (!budget) {
      FailField(ErrorCode::kInvalidArgument, thinking.Field("budget_tokens"),
                "is required when type is \"enabled\"");
    }
    if (max_tokens > 0 && *budget >= max_tokens) {
      FailField(ErrorCode::kInvalidArgument, thinking.Field("budget_tokens"),
                "must be less than max_tokens (", *budget, " >= ", max_tokens, ")");
    }
    reasoning_budget = static_cast<int>(*budget);
  }
  const bool thinks = chat_template == ChatTemplateKind::kThinking;
  if ((type != "disabled") != thinks) {
    FailField(ErrorCode::kInvalidArgument, thinking.Field("type"),
              thinks ? "this model always thinks (a Qwen3-VL Thinking model: its chat template "
                       "opens the reasoning, which comes in thinking blocks); leave thinking out "
                       "or set its type to enabled or adaptive"
                     : "this model does not think (a Qwen3-VL Instruct model); leave thinking "
                       "out or set its type to disabled");
  }
  return reasoning_budget;
}

// Where the structured output format is: output_format, or output_config.format (one of
// them); nullptr when neither is given.
const nlohmann::json* FindFormat(const RequestObject& body, std::string* field) {
  const nlohmann::json* top = body.Find("output_format");
  const nlohmann::json* nested = nullptr;
  if (const nlohmann::json* config = body.Find("output_config")) {
    const RequestObject object(*config, "output_config");
    object.String("effort");
    nested = object.Find("format");
  }
  if (top != nullptr && nested != nullptr) {
    FailField(ErrorCode::kInvalidArgument, "output_config.format",
              "cannot be combined with output_format; send one of them");
  }
  *field = top != nullptr ? "output_format" : "output_config.format";
  return top != nullptr ? top : nested;
}

// {"type": "json_schema", "schema"} compiled as chat's response_format json_schema is;
// `ordered` holds the body's format in the client's key order. Returns the format's field,
// "" when none is given.
std::string ParseOutputFormat(const RequestObject& body, const nlohmann::ordered_json& ordered,
                              GenerationRequest* g) {
  std::string field;
  const nlohmann::json* value = FindFormat(body, &field);
  if (value == nullptr) return "";
  const RequestObject format(*value, field);
  const std::string type = format.RequiredString("type");
  if (type != "json_schema") {
    FailField(ErrorCode::kInvalidArgument, format.Field("type"), "\"", type,
              "\" is not supported; use {\"type\": \"json_schema\", \"schema\": {...}}");
  }
  if (format.Find("schema") == nullptr) {
    FailField(ErrorCode::kInvalidArgument, format.Field("schema"),
              "is required when type is \"json_schema\"");
  }
  const nlohmann::ordered_json& ordered_format = field == "output_format"
                                                     ? ordered.at("output_format")
                                                     : ordered.at("output_config").at("format");
  g->grammar = CompileSchemaAt(ordered_format.at("schema"), format.Field("schema"));
  return field;
}

// tool_choice {"type": auto|any|tool|none, "name"?, "disable_parallel_tool_use"?} as chat's
// auto, required, a function by name and none.
ToolChoice ParseToolChoice(const RequestObject& body) {
  ToolChoice out;
  const nlohmann::json* value = body.Find("tool_choice");
  if (value == nullptr) return out;
  const RequestObject object(*value, "tool_choice");
  out.spelled = object.RequiredString("type");
  if (out.spelled == "any") {
    out.kind = ToolChoice::Kind::kRequired;
  } else if (out.spelled == "none") {
    out.kind = ToolChoice::Kind::kNone;
  } else if (out.spelled == "tool") {
    out.kind = ToolChoice::Kind::kNamed;
    out.name = out.spelled = object.RequiredString("name");
    out.name_field = object.Field("name");
  } else if (out.spelled != "auto") {
    FailField(ErrorCode::kInvalidArgument, object.Field("type"), "\"", out.spelled,
              "\" is not one of auto, any, tool, none");
  }
  out.parallel = !object.Bool("disable_parallel_tool_use").value_or(false);
  return out;
}

// What Anthropic's tools have that chat's do not: the built-in tools, which qvl cannot
// run or describe, and a required input_schema.
void CheckTools(const RequestObject& body) {
  const nlohmann::json* tools = body.Find("tools");
  if (tools == nullptr) return;
  RequireArray(*tools, "tools");
  for (size_t i = 0; i < tools->size(); ++i) {
    const RequestObject tool((*tools)[i], IndexField("tools", i));
    const std::optional<std::string> type = tool.String("type");
    if (type && *type != kAnthropicToolShape.type) {
      FailField(ErrorCode::kInvalidArgument, tool.Field("type"), "\"", *type,
                "\" is one of Anthropic's own tools (run on its servers or built into its "
                "models); qvl offers the tools a request defines: {\"name\", \"description\", "
                "\"input_schema\"}");
    }
    if (tool.Find("input_schema") == nullptr) {
      FailField(ErrorCode::kInvalidArgument, tool.Field("input_schema"), "is required");
    }
    if (const nlohmann::json* mark = tool.Find("cache_control")) {
      RequestObject(*mark, tool.Field("cache_control"));
    }
  }
}

// An empty final assistant message asks for nothing: the answer is a new turn.
bool IsEmptyAssistant(const ChatMessage& m) {
  if (m.role != "assistant" || !m.tool_calls.empty() || m.reasoning) return false;
  for (const ChatPart& part : m.parts) {
    if (part.kind != ChatPart::Kind::kText || !part.text.empty()) return false;
  }
  return true;
}

}  // namespace

AnthropicRequest ParseAnthropicRequest(std::string_view text, const ChatRequestPolicy& policy,
                                       AnthropicBody kind) {
  const nlohmann::json json = ParseJsonBody(text);
  const RequestObject body(json, "");
  AnthropicRequest out;
  out.model = ParseModel(body, policy.model_names);
  RefuseUnsupported(body);
  CheckIgnoredFields(body);
  GenerationRequest& g = out.generation;
  if (kind == AnthropicBody::kMessages) {
    out.stream = ParseGenerationFields(body, policy.max_stop_strings, &g, kTokenLimitFields).stream;
    // message_start carries the prompt's size, which the engine's first progress report
    // gives as soon as the request starts (the final update would be too late).
    g.report_progress = out.stream;
    ParseStopSequences(body, policy.max_stop_strings, &g.stop);
  }
  g.reasoning_budget = ParseThinking(body, policy.chat_template, g.max_tokens);
  ParseImageBudget(body, policy.pixels_per_image_token, &g.image_budget);

  CheckTools(body);
  nlohmann::ordered_json ordered;
  if (body.Find("tools") != nullptr || body.Find("output_format") != nullptr ||
      body.Find("output_config") != nullptr) {
    ordered = OrderedRequestFields(
        text, body.Find("output_format") != nullptr ? "output_format" : "output_config");
  }
  const std::string format_field = ParseOutputFormat(body, ordered, &g);
  out.parse_tool_calls =
      OfferToolsUnder(body, ordered, kAnthropicToolShape, ParseToolChoice(body), format_field, &g);

  ParseAnthropicMessages(body, text, MessageLimitsOf(policy), &g.messages, &g.images);
  g.messages_field = "messages";
  if (IsEmptyAssistant(g.messages.back())) {
    g.messages.pop_back();
    if (g.messages.empty() || g.messages.back().role == "system") {
      FailField(ErrorCode::kInvalidArgument, "messages", "has no message to answer");
    }
  } else if (g.messages.back().role == "assistant") {
    // Anthropic's prefill: the answer continues the final assistant message.
    g.continue_final_message = true;
    g.add_generation_prompt = false;
    CheckContinuedMessages(g, policy.chat_template,
                           {"messages", format_field.empty() ? "tool_choice" : format_field});
  }
  return out;
}

}  // namespace qvl
