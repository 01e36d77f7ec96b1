#include "server/chat_request.h"

#include <nlohmann/json.hpp>

#include "base/field_error.h"
#include "engine/request_ranges.h"
#include "server/chat_messages.h"
#include "server/request_fields.h"

namespace qvl {
namespace {

constexpr size_t kMaxStopLength = 512;
// Far deeper than any real request. nlohmann parses iteratively but serializes
// recursively (error messages, tool call arguments): a body of a few hundred thousand
// '[' would otherwise overflow the HTTP thread's stack.
constexpr int kMaxJsonDepth = 128;

nlohmann::json ParseJsonBody(std::string_view body) {
  const nlohmann::json::parser_callback_t limit_depth =
      [](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
        if (depth >= kMaxJsonDepth && (event == nlohmann::json::parse_event_t::object_start ||
                                       event == nlohmann::json::parse_event_t::array_start)) {
          FailField(ErrorCode::kInvalidArgument, "", "the request body nests JSON deeper than ",
                    kMaxJsonDepth, " levels");
        }
        return true;
      };
  try {
    return nlohmann::json::parse(body.begin(), body.end(), limit_depth);
  } catch (const nlohmann::json::exception& e) {
    // parse_error for bad syntax, out_of_range for a number beyond double ("1e999").
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 9: ..." -> from "parse".
    const size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    FailField(ErrorCode::kInvalidArgument, "", "malformed JSON in the request body: ", what);
  }
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += StrCat(i ? ", \"" : "\"", names[i], "\"");
  return out;
}

void CheckModel(const RequestObject& body, const ChatRequestPolicy& policy, ChatRequest* out) {
  out->model = body.String("model").value_or("");
  if (out->model.empty() || policy.model_names.empty()) return;
  for (const std::string& name : policy.model_names) {
    if (name == out->model) return;
  }
  FailField(ErrorCode::kNotFound, "model", "the model \"", out->model,
            "\" does not exist; this server serves ", JoinNames(policy.model_names));
}

// Features that change the answer: refused rather than silently ignored.
void RefuseUnsupported(const RequestObject& body) {
  if (const nlohmann::json* n = body.Find("n")) {
    if (!(n->is_number_integer() && n->get<int64_t>() == 1)) {
      FailField(ErrorCode::kInvalidArgument, "n", "only n = 1 is supported, got ", n->dump());
    }
  }
  if (const nlohmann::json* tools = body.Find("tools");
      tools != nullptr && !(tools->is_array() && tools->empty())) {
    FailField(ErrorCode::kInvalidArgument, "tools", "function calling is not supported");
  }
  if (const nlohmann::json* choice = body.Find("tool_choice");
      choice != nullptr && !(choice->is_string() && (*choice == "none" || *choice == "auto"))) {
    FailField(ErrorCode::kInvalidArgument, "tool_choice", "function calling is not supported");
  }
  for (const char* key : {"functions", "function_call", "audio"}) {
    if (body.Find(key) != nullptr) {
      FailField(ErrorCode::kInvalidArgument, key, "is not supported by this server");
    }
  }
  if (const nlohmann::json* bias = body.Find("logit_bias");
      bias != nullptr && !(bias->is_object() && bias->empty())) {
    FailField(ErrorCode::kInvalidArgument, "logit_bias", "is not supported by this server");
  }
  if (const nlohmann::json* format = body.Find("response_format")) {
    const RequestObject response_format(*format, "response_format");
    const std::string type = response_format.String("type").value_or("text");
    if (type != "text") {
      FailField(ErrorCode::kInvalidArgument, "response_format.type", "\"", type,
                "\" is not supported; only plain text output is");
    }
  }
  if (const nlohmann::json* modalities = body.Find("modalities")) {
    RequireArray(*modalities, "modalities");
    for (size_t i = 0; i < modalities->size(); ++i) {
      if ((*modalities)[i] != "text") {
        FailField(ErrorCode::kInvalidArgument, IndexField("modalities", i),
                  "only \"text\" output is supported");
      }
    }
  }
}

std::optional<double> ReadNumber(const RequestObject& body, const ParamRange& range) {
  return body.Number(range.name, range.min, range.max, range.min_exclusive);
}

void ParseSampling(const RequestObject& body, SamplingParams* s) {
  namespace r = request_ranges;
  auto as_float = [](std::optional<double> v) {
    return v ? std::optional<float>(static_cast<float>(*v)) : std::nullopt;
  };
  s->temperature = as_float(ReadNumber(body, r::kTemperature));
  s->top_p = as_float(ReadNumber(body, r::kTopP));
  if (auto v = body.Int(r::kTopK.name, static_cast<int64_t>(r::kTopK.min),
                        static_cast<int64_t>(r::kTopK.max))) {
    s->top_k = static_cast<int>(*v < 0 ? 0 : *v);
  }
  s->min_p = as_float(ReadNumber(body, r::kMinP));
  s->presence_penalty = as_float(ReadNumber(body, r::kPresencePenalty));
  s->frequency_penalty = as_float(ReadNumber(body, r::kFrequencyPenalty));
  s->repetition_penalty = as_float(ReadNumber(body, r::kRepetitionPenalty));
  if (auto v = body.Int("seed", INT64_MIN, INT64_MAX)) s->seed = static_cast<uint64_t>(*v);
}

void ParseStop(const RequestObject& body, int max_stop, std::vector<std::string>* stop) {
  const nlohmann::json* value = body.Find("stop");
  if (value == nullptr) return;
  auto add = [&](const nlohmann::json& item, const std::string& field) {
    if (!item.is_string()) {
      FailField(ErrorCode::kInvalidArgument, field, "expected a string, got ", JsonKind(item));
    }
    std::string s = item.get<std::string>();
    if (s.empty()) FailField(ErrorCode::kInvalidArgument, field, "stop strings cannot be empty");
    if (s.size() > kMaxStopLength) {
      FailField(ErrorCode::kInvalidArgument, field, "stop strings can be at most ", kMaxStopLength,
                " bytes long");
    }
    stop->push_back(std::move(s));
  };
  if (value->is_string()) {
    add(*value, "stop");
    return;
  }
  if (!value->is_array()) {
    FailField(ErrorCode::kInvalidArgument, "stop", "expected a string or an array of strings, got ",
              JsonKind(*value));
  }
  if (static_cast<int>(value->size()) > max_stop) {
    FailField(ErrorCode::kInvalidArgument, "stop", "at most ", max_stop,
              " stop strings are supported, got ", value->size());
  }
  for (size_t i = 0; i < value->size(); ++i) add((*value)[i], IndexField("stop", i));
}

// One bound of the image budget, given as pixels or as image tokens, possibly in several
// places; all that are given must agree.
struct BudgetBound {
  int64_t pixels = 0;
  std::string field;

  void Set(int64_t value, std::string_view source) {
    if (pixels != 0 && pixels != value) {
      FailField(ErrorCode::kInvalidArgument, source, "contradicts ", field, " (", value, " vs ",
                pixels, " pixels)");
    }
    pixels = value;
    field = std::string(source);
  }
};

void ParseImageBudget(const RequestObject& body, int64_t pixels_per_token,
                      ImageBudgetRequest* budget) {
  if (pixels_per_token <= 0) {
    Fail(ErrorCode::kInternal, "ChatRequestPolicy::pixels_per_image_token is not set");
  }
  constexpr int64_t kMaxPixels = int64_t{1} << 40;
  BudgetBound min_bound;
  BudgetBound max_bound;
  auto read_pixels = [&](const RequestObject& object, const char* key, BudgetBound* bound) {
    if (auto v = object.Int(key, 1, kMaxPixels)) bound->Set(*v, object.Field(key));
  };
  auto read_tokens = [&](const RequestObject& object, const char* key, BudgetBound* bound) {
    if (auto v = object.Int(key, 1, kMaxPixels / pixels_per_token)) {
      bound->Set(*v * pixels_per_token, object.Field(key));
    }
  };
  read_pixels(body, "min_pixels", &min_bound);
  read_pixels(body, "max_pixels", &max_bound);
  read_tokens(body, "min_image_tokens", &min_bound);
  read_tokens(body, "max_image_tokens", &max_bound);
  if (const nlohmann::json* kwargs = body.Find("mm_processor_kwargs")) {
    const RequestObject mm(*kwargs, "mm_processor_kwargs");
    read_pixels(mm, "min_pixels", &min_bound);
    read_pixels(mm, "max_pixels", &max_bound);
    if (const nlohmann::json* size = mm.Find("size")) {
      const RequestObject size_object(*size, mm.Field("size"));
      read_pixels(size_object, "shortest_edge", &min_bound);
      read_pixels(size_object, "longest_edge", &max_bound);
    }
  }
  if (min_bound.pixels != 0 && max_bound.pixels != 0 && min_bound.pixels > max_bound.pixels) {
    FailField(ErrorCode::kInvalidArgument, min_bound.field, "is larger than ", max_bound.field,
              " (", min_bound.pixels, " > ", max_bound.pixels, " pixels)");
  }
  budget->min_pixels = min_bound.pixels;
  budget->max_pixels = max_bound.pixels;
}

}  // namespace

ChatRequest ParseChatRequest(std::string_view text, const ChatRequestPolicy& policy) {
  const nlohmann::json json = ParseJsonBody(text);
  if (!json.is_object()) {
    FailField(ErrorCode::kInvalidArgument, "", "the request body must be a JSON object, got ",
              JsonKind(json));
  }
  const RequestObject body(json, "");
  ChatRequest out;
  CheckModel(body, policy, &out);
  RefuseUnsupported(body);
  GenerationRequest& g = out.generation;
  out.stream = body.Bool("stream").value_or(false);
  if (const nlohmann::json* options = body.Find("stream_options")) {
    out.include_usage =
        RequestObject(*options, "stream_options").Bool("include_usage").value_or(false);
  }
  // The engine checks them against the prompt; the bound here keeps them within int.
  const auto max_token_bound = static_cast<int64_t>(request_ranges::kMaxTokens.max);
  const auto max_tokens = body.Int("max_tokens", 1, max_token_bound);
  const auto max_completion = body.Int("max_completion_tokens", 1, max_token_bound);
  g.max_tokens = static_cast<int>(max_completion.value_or(max_tokens.value_or(0)));
  if (max_completion) g.max_tokens_field = "max_completion_tokens";
  ParseSampling(body, &g.sampling);
  ParseStop(body, policy.max_stop_strings, &g.stop);
  g.ignore_eos = body.Bool("ignore_eos").value_or(false);
  out.logprobs = body.Bool("logprobs").value_or(false);
  const auto top_logprobs = body.Int(request_ranges::kTopLogprobs.name, 0,
                                     static_cast<int64_t>(request_ranges::kTopLogprobs.max));
  if (top_logprobs && !out.logprobs) {
    FailField(ErrorCode::kInvalidArgument, "top_logprobs", "needs \"logprobs\": true");
  }
  g.top_logprobs = out.logprobs ? static_cast<int>(top_logprobs.value_or(0)) : -1;
  ParseImageBudget(body, policy.pixels_per_image_token, &g.image_budget);

  const nlohmann::json* messages = body.Find("messages");
  if (messages == nullptr) FailField(ErrorCode::kInvalidArgument, "messages", "is required");
  MessageLimits limits;
  limits.max_images = policy.max_images;
  limits.media = policy.media;
  ParseChatMessages(*messages, limits, &g.messages, &g.images);
  return out;
}

}  // namespace qvl
