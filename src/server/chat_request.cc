#include "server/chat_request.h"

#include <nlohmann/json.hpp>

#include "base/field_error.h"
#include "server/chat_messages.h"
#include "server/output_controls.h"
#include "server/request_fields.h"

namespace qvl {
namespace {

constexpr int kMaxTopLogprobs = 20;
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
  if (body.Find("audio") != nullptr) {
    FailField(ErrorCode::kInvalidArgument, "audio", "is not supported by this server");
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

void ParseSampling(const RequestObject& body, SamplingParams* s) {
  if (auto v = body.Number("temperature", 0, 2)) s->temperature = static_cast<float>(*v);
  if (auto v = body.Number("top_p", 0, 1, /*min_exclusive=*/true))
    s->top_p = static_cast<float>(*v);
  if (auto v = body.Int("top_k", -1, 1 << 20)) s->top_k = static_cast<int>(*v < 0 ? 0 : *v);
  if (auto v = body.Number("min_p", 0, 1)) s->min_p = static_cast<float>(*v);
  if (auto v = body.Number("presence_penalty", -2, 2)) s->presence_penalty = static_cast<float>(*v);
  if (auto v = body.Number("frequency_penalty", -2, 2)) {
    s->frequency_penalty = static_cast<float>(*v);
  }
  if (auto v = body.Number("repetition_penalty", 0, 10, /*min_exclusive=*/true)) {
    s->repetition_penalty = static_cast<float>(*v);
  }
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
  out.parse_tool_calls = ParseOutputControls(body, text, &g).parse_tool_calls;
  out.stream = body.Bool("stream").value_or(false);
  if (const nlohmann::json* options = body.Find("stream_options")) {
    out.include_usage =
        RequestObject(*options, "stream_options").Bool("include_usage").value_or(false);
  }
  const auto max_tokens = body.Int("max_tokens", 1, policy.max_completion_tokens);
  const auto max_completion = body.Int("max_completion_tokens", 1, policy.max_completion_tokens);
  g.max_tokens = static_cast<int>(max_completion.value_or(max_tokens.value_or(0)));
  ParseSampling(body, &g.sampling);
  ParseStop(body, policy.max_stop_strings, &g.stop);
  g.ignore_eos = body.Bool("ignore_eos").value_or(false);
  out.logprobs = body.Bool("logprobs").value_or(false);
  const auto top_logprobs = body.Int("top_logprobs", 0, kMaxTopLogprobs);
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
  ParseChatMessages(*messages, limits, &g.messages, &g.images, &g.videos);
  return out;
}

}  // namespace qvl
