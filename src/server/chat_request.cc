#include "server/chat_request.h"

#include <nlohmann/json.hpp>

#include "base/field_error.h"
#include "engine/request_ranges.h"
#include "server/chat_messages.h"
#include "server/generation_fields.h"
#include "server/output_controls.h"
#include "server/request_fields.h"

namespace qvl {
namespace {

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
  const RequestObject body(json, "");
  ChatRequest out;
  out.model = ParseModel(body, policy.model_names);
  RefuseUnsupported(body);
  GenerationRequest& g = out.generation;
  out.parse_tool_calls = ParseOutputControls(body, text, &g).parse_tool_calls;
  const StreamFields stream = ParseGenerationFields(body, policy.max_stop_strings, &g);
  out.stream = stream.stream;
  out.include_usage = stream.include_usage;
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
  ParseChatMessages(*messages, limits, &g.messages, &g.images, &g.videos);
  return out;
}

}  // namespace qvl
