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

// The request-wide video settings, as defaults for every video part: the top-level
// min_video_tokens / max_video_tokens and the video keys of mm_processor_kwargs. There a
// flat key reaches every modality whose processor declares it (transformers'
// ProcessorMixin): `size` (shortest_edge / longest_edge: pixels over all frames of a
// video) is the image processor's and the video processor's, min_pixels / max_pixels
// only the image processor's, fps / num_frames / min_frames / max_frames only the video
// processor's (Qwen3VLVideoProcessor).
VideoInput ParseVideoDefaults(const RequestObject& body, int64_t pixels_per_video_token) {
  constexpr int64_t kMaxPixels = int64_t{1} << 40;
  BudgetBound min_bound;
  BudgetBound max_bound;
  auto read_tokens = [&](const char* key, BudgetBound* bound) {
    if (body.Find(key) == nullptr) return;
    if (pixels_per_video_token <= 0) {
      Fail(ErrorCode::kInternal, "ChatRequestPolicy::pixels_per_video_token is not set");
    }
    if (auto v = body.Int(key, 1, kMaxPixels / pixels_per_video_token)) {
      bound->Set(*v * pixels_per_video_token, body.Field(key));
    }
  };
  read_tokens("min_video_tokens", &min_bound);
  read_tokens("max_video_tokens", &max_bound);
  VideoInput d;
  if (const nlohmann::json* kwargs = body.Find("mm_processor_kwargs")) {
    const RequestObject mm(*kwargs, "mm_processor_kwargs");
    if (const nlohmann::json* size = mm.Find("size")) {
      const RequestObject size_object(*size, mm.Field("size"));
      if (auto v = size_object.Int("shortest_edge", 1, kMaxPixels)) {
        min_bound.Set(*v, size_object.Field("shortest_edge"));
      }
      if (auto v = size_object.Int("longest_edge", 1, kMaxPixels)) {
        max_bound.Set(*v, size_object.Field("longest_edge"));
      }
    }
    d.sample_fps = mm.Number("fps", 0, 100, true).value_or(0);
    d.num_frames = mm.Int("num_frames", 2, 100000).value_or(0);
    d.min_frames = mm.Int("min_frames", 1, 100000).value_or(0);
    d.max_frames = mm.Int("max_frames", 2, 100000).value_or(0);
    if (d.sample_fps > 0 && d.num_frames > 0) {
      FailField(ErrorCode::kInvalidArgument, mm.Field("num_frames"),
                "and fps are mutually exclusive; give one");
    }
    if (d.min_frames > 0 && d.max_frames > 0 && d.min_frames > d.max_frames) {
      FailField(ErrorCode::kInvalidArgument, mm.Field("min_frames"), "is larger than ",
                mm.Field("max_frames"), " (", d.min_frames, " > ", d.max_frames, ")");
    }
    if (mm.Bool("do_sample_frames") == false) {
      FailField(ErrorCode::kInvalidArgument, mm.Field("do_sample_frames"),
                "qvl always samples frames; set num_frames or fps to keep more of them");
    }
  }
  if (min_bound.pixels != 0 && max_bound.pixels != 0 && min_bound.pixels > max_bound.pixels) {
    FailField(ErrorCode::kInvalidArgument, min_bound.field, "is larger than ", max_bound.field,
              " (", min_bound.pixels, " > ", max_bound.pixels, " pixels over all frames)");
  }
  d.budget.min_pixels = min_bound.pixels;
  d.budget.max_pixels = max_bound.pixels;
  return d;
}

// A video part's own keys win over the request's: its rate or frame count over both of
// the request's, each of its bounds over the same bound of the request.
void ApplyVideoDefaults(const VideoInput& d, std::vector<VideoInput>* videos) {
  for (VideoInput& v : *videos) {
    if (v.sample_fps == 0 && v.num_frames == 0) {
      v.sample_fps = d.sample_fps;
      v.num_frames = d.num_frames;
    }
    if (v.min_frames == 0) v.min_frames = d.min_frames;
    if (v.max_frames == 0) v.max_frames = d.max_frames;
    if (v.budget.min_pixels == 0) v.budget.min_pixels = d.budget.min_pixels;
    if (v.budget.max_pixels == 0) v.budget.max_pixels = d.budget.max_pixels;
  }
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
  limits.pixels_per_video_token = policy.pixels_per_video_token;
  limits.pixels_per_image_token = policy.pixels_per_image_token;
  const VideoInput video_defaults = ParseVideoDefaults(body, policy.pixels_per_video_token);
  ParseChatMessages(*messages, limits, &g.messages, &g.images, &g.videos);
  ApplyVideoDefaults(video_defaults, &g.videos);
  return out;
}

}  // namespace qvl
