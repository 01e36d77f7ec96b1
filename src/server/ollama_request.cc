#include "server/ollama_request.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/field_error.h"
#include "engine/request_ranges.h"
#include "grammar/grammar.h"
#include "server/chat_messages.h"
#include "server/generation_fields.h"
#include "server/media_fields.h"
#include "server/output_controls.h"
#include "server/reasoning_effort.h"
#include "server/request_fields.h"
#include "server/served_models.h"
#include "server/server_dialects.h"

namespace qvl {
namespace {

constexpr char kLatestTag[] = ":latest";

// Absent, null or an empty list: what Ollama treats as not given.
bool NoneGiven(const nlohmann::json* value) {
  return value == nullptr || (value->is_array() && value->empty());
}

}  // namespace

// Ollama names models NAME:TAG and its clients add ":latest" to a bare name.
std::string ParseOllamaModel(const RequestObject& body, const std::vector<std::string>& names,
                             std::string_view key) {
  std::string model = body.RequiredString(key);
  if (names.empty()) return model;
  std::string_view served = model;
  const std::string_view tag = kLatestTag;
  const bool exact = std::find(names.begin(), names.end(), model) != names.end();
  if (!exact && served.size() > tag.size() && served.ends_with(tag)) {
    served.remove_suffix(tag.size());
  }
  RequireServedModel(served, names);
  return model;
}

namespace {

// Ollama's "think": true, false, or a level (kOllamaThinkLevels). It must say what the
// model does anyway: an Instruct model never thinks, and a Thinking model's template
// always opens its reasoning (there is no switch to skip it). A level sets the Thinking
// model's budget (reasoning_effort.h); true leaves it to the server. Returns the budget,
// -1 for none.
int ParseThink(const RequestObject& body, ChatTemplateKind chat_template) {
  const nlohmann::json* think = body.Find("think");
  if (think == nullptr) return -1;
  std::optional<int> budget;
  if (think->is_string()) {
    const std::string level = think->get<std::string>();
    if (std::ranges::find(kOllamaThinkLevels, level) == std::end(kOllamaThinkLevels)) {
      FailField(ErrorCode::kInvalidArgument, "think", "\"", level, "\" is not one of true, false, ",
                ListLevels(kOllamaThinkLevels));
    }
    budget = ReasoningEffortBudget(level);
  } else if (!think->is_boolean()) {
    FailField(ErrorCode::kInvalidArgument, "think", "expected true, false or one of ",
              ListLevels(kOllamaThinkLevels), ", got ", JsonKind(*think));
  }
  const bool asks = think->is_string() || think->get<bool>();
  const bool thinking = chat_template == ChatTemplateKind::kThinking;
  if (asks != thinking) {
    FailField(ErrorCode::kInvalidArgument, "think",
              thinking ? "this model always thinks (a Qwen3-VL Thinking model: its chat "
                         "template opens the reasoning, which comes in \"thinking\"); "
                         "leave think out or set it to true or a level"
                       : "this model does not think; leave think out or set it to false");
  }
  return budget.value_or(-1);
}

// Ollama's logprobs (true: each answer token's logprob) and top_logprobs (how many
// alternatives beside it, read only with logprobs, as Ollama does; checked always).
void ParseLogprobs(const RequestObject& body, GenerationRequest* g) {
  const bool logprobs = body.Bool("logprobs").value_or(false);
  const std::optional<int64_t> top =
      body.Int(request_ranges::kTopLogprobs.name, request_ranges::kTopLogprobs.min,
               request_ranges::kTopLogprobs.max);
  if (logprobs) g->top_logprobs = static_cast<int>(top.value_or(0));
}

// Options that set how the runner uses the machine, not what it answers; num_gqa, f16_kv,
// logits_all and embedding_only are older Ollama's, which clients written for it still
// send and today's Ollama ignores.
constexpr const char* kRuntimeIntOptions[] = {"num_ctx",    "num_batch", "num_gpu", "main_gpu",
                                              "num_thread", "num_keep",  "num_gqa"};
constexpr const char* kRuntimeBoolOptions[] = {"low_vram",   "use_mmap",      "use_mlock",
                                               "numa",       "vocab_only",    "f16_kv",
                                               "logits_all", "embedding_only"};
// Options read into the request (and by ParseSamplingFields / ParseStopField).
constexpr const char* kMappedOptions[] = {"temperature",
                                          "top_p",
                                          "top_k",
                                          "min_p",
                                          "seed",
                                          "stop",
                                          "num_predict",
                                          "repeat_penalty",
                                          "presence_penalty",
                                          "frequency_penalty",
                                          "typical_p",
                                          "mirostat",
                                          "mirostat_tau",
                                          "mirostat_eta"};
// Sampling options qvl's sampler does not implement, accepted at their neutral value only.
constexpr const char* kNeutralOptions[] = {"tfs_z", "penalize_newline", "repeat_last_n"};

bool IsOneOf(const std::string& key, std::span<const char* const> names) {
  for (const char* name : names) {
    if (key == name) return true;
  }
  return false;
}

void RefuseUnlessNeutral(const RequestObject& options, const char* key, double neutral,
                         const char* what) {
  const std::optional<double> value = options.Number(key, -1e9, 1e9);
  if (value && *value != neutral) {
    FailField(ErrorCode::kInvalidArgument, options.Field(key), "is not supported (", what,
              "); leave it out or at ", neutral);
  }
}

// Whether a penalty would change the logits: repeat_penalty other than 1 or a presence or
// frequency penalty other than 0. An absent repeat_penalty is the model's default,
// which is 1 for Qwen3-VL (generation_config.json).
bool PenaltiesActive(const SamplingParams& s) {
  return s.repetition_penalty.value_or(1.0f) != 1.0f || s.presence_penalty.value_or(0.0f) != 0.0f ||
         s.frequency_penalty.value_or(0.0f) != 0.0f;
}

// repeat_last_n is the window of recent tokens Ollama's penalties look at: -1 the whole
// context, 0 none (the penalties are off), N the last N. qvl's sampler has no window: its
// repetition penalty looks at every token of the prompt and the answer (exactly -1), its
// presence and frequency penalties at every token of the answer (OpenAI's definition,
// kept here as on /v1). So -1 is taken as qvl's penalties; 0 turns them off by setting
// them neutral; N > 0 matches only when no penalty is active, for then no window changes
// anything. An absent repeat_last_n (Ollama's default of 64) leaves qvl's penalties as
// they are: refusing the default would refuse every penalty.
void ParseRepeatWindow(const RequestObject& options, SamplingParams* s) {
  const std::optional<int64_t> window = options.Int("repeat_last_n", -1, INT32_MAX);
  if (!window || *window == -1) return;
  if (*window == 0) {
    s->repetition_penalty = 1.0f;
    s->presence_penalty = 0.0f;
    s->frequency_penalty = 0.0f;
    return;
  }
  if (PenaltiesActive(*s)) {
    FailField(ErrorCode::kInvalidArgument, options.Field("repeat_last_n"),
              "qvl's penalties look at the whole sequence, not at the last ", *window,
              " tokens; use -1 (the whole context) or 0 (penalties off)");
  }
}

// num_predict: -1 (until the end) and -2 (until the context is full) are qvl's default of
// answering as long as the context allows; other values within max_tokens' range.
void ParseNumPredict(const RequestObject& options, GenerationRequest* g) {
  const ParamRange& range = request_ranges::kMaxTokens;
  const std::optional<int64_t> n = options.Int("num_predict", -2, static_cast<int64_t>(range.max));
  if (!n || *n < 0) return;
  if (!range.Contains(static_cast<double>(*n))) {
    FailField(ErrorCode::kInvalidArgument, options.Field("num_predict"),
              "must be -1, -2 or between ", static_cast<int64_t>(range.min), " and ",
              static_cast<int64_t>(range.max), ", got ", *n);
  }
  g->max_tokens = static_cast<int>(*n);
  g->max_tokens_field = options.Field("num_predict");
}

}  // namespace

void ParseOllamaOptions(const RequestObject& body, int max_stop, GenerationRequest* g) {
  // Ollama unloads a model on "keep_alive": 0; qvl keeps its one model loaded.
  if (const nlohmann::json* keep_alive = body.Find("keep_alive")) {
    if (!keep_alive->is_string() && !keep_alive->is_number()) {
      FailField(ErrorCode::kInvalidArgument, "keep_alive",
                "expected a duration (\"5m\") or a number of seconds, got ", JsonKind(*keep_alive));
    }
  }
  const nlohmann::json* value = body.Find("options");
  if (value == nullptr) return;
  const RequestObject options(*value, "options");
  for (const auto& [key, item] : value->items()) {
    // null is absent, as everywhere in a request (clients send unset options as null).
    if (item.is_null()) continue;
    if (IsOneOf(key, kRuntimeIntOptions)) {
      options.Int(key, INT32_MIN, INT32_MAX);
    } else if (IsOneOf(key, kRuntimeBoolOptions)) {
      options.Bool(key);
    } else if (!IsOneOf(key, kMappedOptions) && !IsOneOf(key, kNeutralOptions)) {
      FailField(ErrorCode::kInvalidArgument, options.Field(key), "unknown option \"", key, "\"");
    }
  }
  ParseSamplingFields(options, &g->sampling, "repeat_penalty");
  ParseStopField(options, max_stop, &g->stop);
  ParseNumPredict(options, g);
  RefuseUnlessNeutral(options, "tfs_z", 1, "tail free sampling");
  if (options.Bool("penalize_newline").value_or(false)) {
    FailField(ErrorCode::kInvalidArgument, options.Field("penalize_newline"),
              "is not supported (qvl penalizes every token alike); leave it out or false");
  }
  ParseRepeatWindow(options, &g->sampling);
}

namespace {

// "format": "json" (any JSON object), a JSON schema, or "" / absent (text). `ordered`
// holds the body's format in the client's key order.
void ParseFormat(const RequestObject& body, const nlohmann::ordered_json& ordered,
                 GenerationRequest* g) {
  const nlohmann::json* format = body.Find("format");
  if (format == nullptr) return;
  if (format->is_string()) {
    const std::string name = format->get<std::string>();
    if (name.empty()) return;
    if (name != "json") {
      FailField(ErrorCode::kInvalidArgument, "format", "\"", name,
                "\" is not a format; use \"json\" or a JSON schema");
    }
    g->grammar = JsonObjectGrammar();
    return;
  }
  if (!format->is_object()) {
    FailField(ErrorCode::kInvalidArgument, "format", "expected \"json\" or a JSON schema, got ",
              JsonKind(*format));
  }
  g->grammar = CompileSchemaAt(ordered.at("format"), "format");
}

// A message's or the request's "images": base64 strings (Ollama's) or data: URLs, at
// `field`, each loaded by AddImage as the next image of the request.
std::vector<ChatPart> ParseImages(const nlohmann::json& images, const std::string& field,
                                  const std::string& role, const MessageLimits& limits,
                                  std::vector<ImageInput>* out) {
  RequireArray(images, field);
  std::vector<ChatPart> parts;
  if (!images.empty()) CheckImageRole(role, field);
  for (size_t j = 0; j < images.size(); ++j) {
    const std::string image_field = IndexField(field, j);
    if (!images[j].is_string()) {
      FailField(ErrorCode::kInvalidArgument, image_field, "expected a base64 image, got ",
                JsonKind(images[j]));
    }
    std::string image = images[j].get<std::string>();
    // A bare payload is a data URL without a media type: the one loader checks its size
    // and base64 and names the field alike.
    if (image.rfind("data:", 0) != 0) image = "data:;base64," + image;
    parts.push_back(AddImage(image, image_field, ImageDetail::kAuto, limits, out));
  }
  return parts;
}

// Images first, then the text, as Qwen's examples place them. Without images the
// message is chat's string content (none when an assistant turn gives no content).
ChatMessage MessageOf(std::string role, std::vector<ChatPart> images,
                      std::optional<std::string> text) {
  ChatMessage m;
  m.role = std::move(role);
  m.content_is_string = images.empty();
  m.parts = std::move(images);
  if (text && (m.content_is_string || !text->empty()))
    m.parts.push_back(TextPart(*std::move(text)));
  return m;
}

void ParseMessages(const RequestObject& body, const MessageLimits& limits, GenerationRequest* g) {
  const nlohmann::json* messages = body.Find("messages");
  if (messages == nullptr) FailField(ErrorCode::kInvalidArgument, "messages", "is required");
  RequireArray(*messages, "messages");
  if (messages->empty()) {
    FailField(ErrorCode::kInvalidArgument, "messages", "needs at least one message");
  }
  for (size_t i = 0; i < messages->size(); ++i) {
    const RequestObject message((*messages)[i], IndexField("messages", i));
    std::string role = ParseChatRole(message, i);
    std::optional<std::string> content = message.String("content");
    if (!content && role != "assistant") {
      FailField(ErrorCode::kInvalidArgument, message.Field("content"), "is required");
    }
    message.String("tool_name");
    std::vector<ChatPart> images;
    if (const nlohmann::json* list = message.Find("images")) {
      images = ParseImages(*list, message.Field("images"), role, limits, &g->images);
    }
    std::vector<ChatToolCall> calls;
    if (const nlohmann::json* list = message.Find("tool_calls")) {
      ParseToolCalls(*list, message.Field("tool_calls"), role, &calls);
    }
    // An earlier answer's reasoning, as the encoder gave it (a Thinking model's).
    std::optional<std::string> thinking = message.String("thinking");
    if (thinking && role != "assistant") {
      FailField(ErrorCode::kInvalidArgument, message.Field("thinking"),
                "is only for assistant messages");
    }
    ChatMessage m = MessageOf(std::move(role), std::move(images), std::move(content));
    m.tool_calls = std::move(calls);
    m.reasoning = std::move(thinking);
    g->messages.push_back(std::move(m));
  }
}

// What both routes read alike; returns the body's tools and format in the client's order.
nlohmann::ordered_json ParseShared(const RequestObject& body, std::string_view text,
                                   const ChatRequestPolicy& policy, OllamaRequest* out) {
  out->model = ParseOllamaModel(body, policy.model_names);
  out->stream = body.Bool("stream").value_or(true);
  GenerationRequest& g = out->generation;
  ParseLogprobs(body, &g);
  g.reasoning_budget = ParseThink(body, policy.chat_template);
  ParseOllamaOptions(body, policy.max_stop_strings, &g);
  ParseImageBudget(body, policy.pixels_per_image_token, &g.image_budget);
  nlohmann::ordered_json ordered;
  if (body.Find("format") != nullptr || body.Find("tools") != nullptr) {
    ordered = OrderedRequestFields(text, "format");
  }
  ParseFormat(body, ordered, &g);
  return ordered;
}

// /api/generate fields that change the answer and that qvl cannot honour.
void RefuseUnsupportedGenerate(const RequestObject& body) {
  if (!body.String("suffix").value_or("").empty()) {
    FailField(ErrorCode::kInvalidArgument, "suffix",
              "is not supported (this model has no fill-in-the-middle)");
  }
  if (const nlohmann::json* context = body.Find("context"); !NoneGiven(context)) {
    FailField(ErrorCode::kInvalidArgument, "context",
              "token contexts are not supported; send the conversation to /api/chat");
  }
  if (!body.String("template").value_or("").empty()) {
    FailField(ErrorCode::kInvalidArgument, "template",
              "is not supported: qvl uses the model's chat template; send \"raw\": true with "
              "the prompt already formatted");
  }
}

}  // namespace

OllamaRequest ParseOllamaChat(std::string_view text, const ChatRequestPolicy& policy) {
  const nlohmann::json json = ParseJsonBody(text);
  const RequestObject body(json, "");
  OllamaRequest out;
  const nlohmann::ordered_json ordered = ParseShared(body, text, policy, &out);
  // Ollama has no tool_choice: offered tools may be called or not, as "auto".
  out.parse_tool_calls = OfferTools(body, ordered, &out.generation);
  if (const nlohmann::json* messages = body.Find("messages"); NoneGiven(messages)) {
    out.load_only = true;
    return out;
  }
  GenerationRequest& g = out.generation;
  ParseMessages(body, MessageLimitsOf(policy), &g);
  // Ollama continues a final assistant message that has text (its "prefill"): the answer
  // carries on from that text, as continue_final_message does on /v1/chat/completions.
  const ChatMessage& last = g.messages.back();
  const bool has_text = std::ranges::any_of(last.parts, [](const ChatPart& p) {
    return p.kind == ChatPart::Kind::kText && !p.text.empty();
  });
  if (last.role == "assistant" && last.tool_calls.empty() && has_text) {
    g.continue_final_message = true;
    g.add_generation_prompt = false;
    CheckContinuedMessages(g, policy.chat_template, {"messages", "format"});
  }
  return out;
}

OllamaRequest ParseOllamaGenerate(std::string_view text, const ChatRequestPolicy& policy) {
  const nlohmann::json json = ParseJsonBody(text);
  const RequestObject body(json, "");
  OllamaRequest out;
  ParseShared(body, text, policy, &out);
  RefuseUnsupportedGenerate(body);
  if (body.Find("tools") != nullptr) {
    FailField(ErrorCode::kInvalidArgument, "tools", "are only offered on /api/chat");
  }
  GenerationRequest& g = out.generation;
  g.messages_field = "prompt";
  std::string prompt = body.String("prompt").value_or("");
  if (prompt.empty()) {
    const nlohmann::json* images = body.Find("images");
    if (NoneGiven(images)) {
      out.load_only = true;
      return out;
    }
    FailField(ErrorCode::kInvalidArgument, "prompt", "is required with images");
  }
  const std::optional<std::string> system = body.String("system");
  if (body.Bool("raw").value_or(false)) {
    // The raw prompt path (as /v1/completions'): no template, so nothing to put system
    // text or images in.
    if (system) {
      FailField(ErrorCode::kInvalidArgument, "system",
                "cannot be combined with raw: write it into the prompt");
    }
    if (const nlohmann::json* images = body.Find("images"); !NoneGiven(images)) {
      FailField(ErrorCode::kInvalidArgument, "images",
                "cannot be combined with raw: a raw prompt has no place for images");
    }
    g.prompt_text = std::move(prompt);
    return out;
  }
  if (system) g.messages.push_back(MessageOf("system", {}, *system));
  std::vector<ChatPart> images;
  if (const nlohmann::json* list = body.Find("images")) {
    images = ParseImages(*list, "images", "user", MessageLimitsOf(policy), &g.images);
  }
  g.messages.push_back(MessageOf("user", std::move(images), std::move(prompt)));
  return out;
}

std::string OllamaModelName(std::string_view text, const std::vector<std::string>& names) {
  const nlohmann::json json = ParseJsonBody(text);
  const RequestObject body(json, "");
  // Older clients name the model "name".
  const bool old_key = body.Find("model") == nullptr && body.Find("name") != nullptr;
  return ParseOllamaModel(body, names, old_key ? "name" : "model");
}

}  // namespace qvl
