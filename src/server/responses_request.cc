#include "server/responses_request.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/field_error.h"
#include "engine/request_ranges.h"
#include "server/base64.h"
#include "server/generation_fields.h"
#include "server/media_fields.h"
#include "server/output_controls.h"
#include "server/reasoning_effort.h"
#include "server/request_fields.h"
#include "server/responses_input.h"

namespace qvl {
namespace {

constexpr char kLogprobsInclude[] = "message.output_text.logprobs";
// include values about outputs qvl never produces: there is nothing to add.
constexpr const char* kIgnoredIncludes[] = {
    "reasoning.encrypted_content",   "file_search_call.results",
    "web_search_call.results",       "web_search_call.action.sources",
    "code_interpreter_call.outputs", "computer_call_output.output.image_url",
    "message.input_image.image_url",
};

// Features qvl cannot honour and chat fields with another spelling here: refused rather
// than silently ignored.
void RefuseUnsupported(const RequestObject& body) {
  if (body.Find("conversation") != nullptr) {
    FailField(ErrorCode::kInvalidArgument, "conversation",
              "the Conversations API is not supported; continue a stored response with "
              "previous_response_id, or send the earlier turns in input");
  }
  if (body.Bool("background").value_or(false)) {
    FailField(
        ErrorCode::kInvalidArgument, "background",
        "is not supported: qvl answers while the request waits; stream to follow a long answer");
  }
  if (body.Find("prompt") != nullptr) {
    FailField(ErrorCode::kInvalidArgument, "prompt",
              "stored prompt templates are not supported; send instructions and input");
  }
  if (body.Find("n") != nullptr) {
    FailField(ErrorCode::kInvalidArgument, "n",
              "the Responses API has one answer per request; use /v1/chat/completions for n");
  }
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    if (body.Find(key) != nullptr) {
      FailField(ErrorCode::kInvalidArgument, key, "use max_output_tokens");
    }
  }
  if (body.Find("response_format") != nullptr) {
    FailField(ErrorCode::kInvalidArgument, "response_format", "use text.format");
  }
  if (body.Find("logprobs") != nullptr) {
    FailField(ErrorCode::kInvalidArgument, "logprobs", "use include: [\"", kLogprobsInclude,
              "\"] (and top_logprobs)");
  }
  if (std::optional<std::string> truncation = body.String("truncation")) {
    if (*truncation == "auto") {
      FailField(ErrorCode::kInvalidArgument, "truncation",
                "\"auto\" is not supported: qvl never drops earlier turns (nor cuts through an "
                "image); send what fits the context");
    }
    if (*truncation != "disabled") {
      FailField(ErrorCode::kInvalidArgument, "truncation", "\"", *truncation,
                "\" is not one of disabled, auto");
    }
  }
}

struct Reasoning {
  // reasoning.summary (or its deprecated name generate_summary) as sent; nullopt when not
  // asked for. qvl has nothing to make a summary with: a Thinking model's reasoning is
  // given as its own summary (ResponsesEncoder).
  std::optional<std::string> summary;
  // reasoning.effort: the thinking budget its level sets (reasoning_effort.h).
  std::optional<ReasoningEffort> effort;
};

Reasoning ParseReasoning(const RequestObject& body) {
  const nlohmann::json* reasoning = body.Find("reasoning");
  if (reasoning == nullptr) return {};
  const RequestObject object(*reasoning, "reasoning");
  Reasoning out;
  out.effort = ParseReasoningEffort(object, "effort");
  for (const char* key : {"summary", "generate_summary"}) {
    std::optional<std::string> value = object.String(key);
    if (!value) continue;
    if (*value != "auto" && *value != "concise" && *value != "detailed") {
      FailField(ErrorCode::kInvalidArgument, object.Field(key), "\"", *value,
                "\" is not one of auto, concise, detailed");
    }
    if (!out.summary) out.summary = std::move(value);
  }
  return out;
}

// Fields that change nothing qvl does, checked so that a wrong one is still a 400.
void CheckIgnoredFields(const RequestObject& body) {
  if (const nlohmann::json* text = body.Find("text")) {
    const RequestObject object(*text, "text");
    if (std::optional<std::string> verbosity = object.String("verbosity")) {
      if (*verbosity != "low" && *verbosity != "medium" && *verbosity != "high") {
        FailField(ErrorCode::kInvalidArgument, object.Field("verbosity"), "\"", *verbosity,
                  "\" is not one of low, medium, high");
      }
    }
  }
}

// Whether include asks for the answer's logprobs.
bool ParseInclude(const RequestObject& body) {
  const nlohmann::json* include = body.Find("include");
  if (include == nullptr) return false;
  RequireArray(*include, "include");
  bool logprobs = false;
  for (size_t i = 0; i < include->size(); ++i) {
    const std::string field = IndexField("include", i);
    const nlohmann::json& value = (*include)[i];
    if (!value.is_string()) {
      FailField(ErrorCode::kInvalidArgument, field, "expected a string, got ", JsonKind(value));
    }
    const std::string name = value.get<std::string>();
    if (name == kLogprobsInclude) {
      logprobs = true;
      continue;
    }
    bool ignored = false;
    for (const char* known : kIgnoredIncludes) ignored = ignored || name == known;
    if (!ignored) {
      FailField(ErrorCode::kInvalidArgument, field, "\"", name,
                "\" is not something qvl can include; it includes ", kLogprobsInclude);
    }
  }
  return logprobs;
}

// The value of `key` as sent, or null.
nlohmann::ordered_json SentOrNull(const RequestObject& body, const char* key) {
  const nlohmann::json* value = body.Find(key);
  return value != nullptr ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

// `ordered` holds the body's tools and text in the client's key order. reasoning.effort is
// the level in force: null when the model does not reason, for then it changes nothing.
nlohmann::ordered_json Echo(const RequestObject& body, const nlohmann::ordered_json& ordered,
                            int64_t top_logprobs, bool store, const Reasoning& reasoning,
                            bool thinks) {
  nlohmann::ordered_json echo = nlohmann::ordered_json::object();
  echo["instructions"] = SentOrNull(body, "instructions");
  echo["max_output_tokens"] = SentOrNull(body, "max_output_tokens");
  echo["temperature"] = SentOrNull(body, "temperature");
  echo["top_p"] = SentOrNull(body, "top_p");
  echo["top_logprobs"] = top_logprobs;
  const bool has_tools =
      ordered.is_object() && ordered.contains("tools") && ordered["tools"].is_array();
  echo["tools"] = has_tools ? ordered["tools"] : nlohmann::ordered_json::array();
  const nlohmann::json* tool_choice = body.Find("tool_choice");
  echo["tool_choice"] = tool_choice != nullptr ? nlohmann::ordered_json(*tool_choice)
                                               : nlohmann::ordered_json("auto");
  echo["parallel_tool_calls"] = body.Bool("parallel_tool_calls").value_or(true);
  nlohmann::ordered_json text = {{"format", {{"type", "text"}}}};
  if (ordered.is_object() && ordered.contains("text") && ordered["text"].is_object()) {
    const nlohmann::ordered_json& sent = ordered["text"];
    if (sent.contains("format") && !sent["format"].is_null()) text["format"] = sent["format"];
    if (sent.contains("verbosity") && !sent["verbosity"].is_null()) {
      text["verbosity"] = sent["verbosity"];
    }
  }
  echo["text"] = std::move(text);
  echo["truncation"] = "disabled";
  const nlohmann::json* metadata = body.Find("metadata");
  echo["metadata"] =
      metadata != nullptr ? nlohmann::ordered_json(*metadata) : nlohmann::ordered_json::object();
  echo["store"] = store;
  echo["user"] = SentOrNull(body, "user");
  const std::optional<ReasoningEffort>& effort = reasoning.effort;
  const std::optional<std::string>& summary = reasoning.summary;
  echo["reasoning"] = {
      {"effort", effort && thinks ? nlohmann::ordered_json(effort->level) : nullptr},
      {"summary", summary ? nlohmann::ordered_json(*summary) : nullptr}};
  echo["previous_response_id"] = SentOrNull(body, "previous_response_id");
  return echo;
}

// The items of the conversation previous_response_id names; null without one.
nlohmann::json EarlierConversation(const RequestObject& body, const StoredConversation& stored) {
  const std::optional<std::string> id = body.String("previous_response_id");
  if (!id) return nullptr;
  if (!stored) {
    FailField(ErrorCode::kInvalidArgument, "previous_response_id",
              "this server keeps no responses (--response-store-mb 0); send the earlier turns "
              "in input (the server's prefix cache reuses their work)");
  }
  const std::optional<std::string> text = stored(*id);
  nlohmann::json items =
      text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json(nullptr);
  if (!items.is_array()) {
    FailField(ErrorCode::kInvalidArgument, "previous_response_id", NoStoredResponse(*id),
              "; send the earlier turns in input");
  }
  return items;
}

// "input[1].content[0].image_url" -> "/input/1/content/0/image_url".
nlohmann::json::json_pointer PointerTo(std::string_view field) {
  std::string pointer = "/";
  for (const char c : field) {
    if (c == '[' || c == '.') {
      pointer.push_back('/');
    } else if (c != ']') {
      pointer.push_back(c);
    }
  }
  return nlohmann::json::json_pointer(pointer);
}

// This request's input as items: a string is one user message. An image whose payload
// was cut from the body (TakeInlineMedia leaves "data:TYPE;base64,") gets it back, for
// a later previous_response_id reads the image from here.
void AppendInputItems(const RequestObject& body, const std::vector<ImageInput>& images,
                      nlohmann::json* items) {
  const nlohmann::json& input = *body.Find("input");
  if (input.is_string()) {
    items->push_back({{"role", "user"}, {"content", input}});
    return;
  }
  nlohmann::json request = {{"input", input}};
  for (const ImageInput& image : images) {
    if (image.field.rfind("input[", 0) != 0) continue;
    const nlohmann::json::json_pointer at = PointerTo(image.field);
    if (!request.contains(at)) continue;
    nlohmann::json& url = request[at];
    if (url.is_string() && url.get_ref<const std::string&>().ends_with(",")) {
      url.get_ref<std::string&>() += EncodeBase64(image.bytes);
    }
  }
  for (nlohmann::json& item : request["input"]) items->push_back(std::move(item));
}

}  // namespace

std::string NoStoredResponse(std::string_view id) {
  return StrCat("no stored response \"", id,
                "\": it was never stored (store: false), was deleted, or the server's store "
                "(--response-store-mb) no longer holds it");
}

ResponsesRequest ParseResponsesRequest(std::string_view text, const ChatRequestPolicy& policy,
                                       const StoredConversation& stored) {
  const nlohmann::json json = ParseJsonBody(text);
  const RequestObject body(json, "");
  ResponsesRequest out;
  out.model = ParseModel(body, policy.model_names);
  RefuseUnsupported(body);
  GenerationRequest& g = out.generation;
  const OutputControls controls = ParseOutputControls(body, text, &g, kResponsesOutputShape);
  out.parse_tool_calls = controls.parse_tool_calls;
  // Usage is always reported in this API: stream_options.include_usage changes nothing.
  out.stream =
      ParseGenerationFields(body, policy.max_stop_strings, &g, kResponsesTokenLimitFields).stream;
  // Checked always, as on chat, but asked of the engine only when streamed: a whole answer
  // has nowhere to show it.
  out.return_progress = body.Bool("return_progress").value_or(false) && out.stream;
  g.report_progress = out.return_progress;
  const auto top_logprobs = body.Int(request_ranges::kTopLogprobs.name, 0,
                                     static_cast<int64_t>(request_ranges::kTopLogprobs.max));
  // Without the include OpenAI returns no logprobs, whatever top_logprobs says.
  out.logprobs = ParseInclude(body);
  g.top_logprobs = out.logprobs ? static_cast<int>(top_logprobs.value_or(0)) : -1;
  const Reasoning reasoning = ParseReasoning(body);
  if (reasoning.effort) g.reasoning_budget = reasoning.effort->budget;
  ParseImageBudget(body, policy.pixels_per_image_token, &g.image_budget);
  CheckIgnoredFields(body);
  const nlohmann::json earlier = EarlierConversation(body, stored);
  ParseResponsesInput(body, earlier.is_null() ? nullptr : &earlier, MessageLimitsOf(policy),
                      &g.messages, &g.images);
  g.messages_field = "input";
  const bool store = body.Bool("store").value_or(true);
  out.store = store && stored;
  if (out.store) {
    if (!earlier.is_null()) out.conversation = earlier;
    AppendInputItems(body, g.images, &out.conversation);
  }
  out.echo = Echo(body, controls.ordered, top_logprobs.value_or(0), out.store, reasoning,
                  policy.chat_template == ChatTemplateKind::kThinking);
  return out;
}

}  // namespace qvl
