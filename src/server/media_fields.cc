#include "server/media_fields.h"

#include <string>
#include <string_view>

#include "base/field_error.h"
#include "image/image_limits.h"

namespace qvl {
namespace {

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

}  // namespace

void ParseImageBudget(const RequestObject& body, int64_t pixels_per_token,
                      ImageBudgetRequest* budget) {
  if (pixels_per_token <= 0) {
    Fail(ErrorCode::kInternal, "ChatRequestPolicy::pixels_per_image_token is not set");
  }
  BudgetBound min_bound;
  BudgetBound max_bound;
  auto read_pixels = [&](const RequestObject& object, const char* key, BudgetBound* bound) {
    if (auto v = object.Int(key, 1, kMaxPixelBudget)) bound->Set(*v, object.Field(key));
  };
  auto read_tokens = [&](const RequestObject& object, const char* key, BudgetBound* bound) {
    if (auto v = object.Int(key, 1, kMaxPixelBudget / pixels_per_token)) {
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

VideoInput ParseVideoDefaults(const RequestObject& body, int64_t pixels_per_video_token) {
  VideoInput d;
  // Bounds in tokens are the video's whole cost in the prompt (ClipBudget leaves the
  // frames what its timestamps take); bounds in pixels are the frames' alone, as the
  // reference's. The two measure different things, so both may be given: the tighter
  // maximum holds.
  auto read_tokens = [&](const char* key) -> int64_t {
    if (body.Find(key) == nullptr) return 0;
    if (pixels_per_video_token <= 0) {
      Fail(ErrorCode::kInternal, "ChatRequestPolicy::pixels_per_video_token is not set");
    }
    return body.Int(key, 1, kMaxPixelBudget / pixels_per_video_token).value_or(0);
  };
  d.budget.min_tokens = read_tokens("min_video_tokens");
  d.budget.max_tokens = read_tokens("max_video_tokens");
  if (d.budget.min_tokens > 0 && d.budget.max_tokens > 0 &&
      d.budget.min_tokens > d.budget.max_tokens) {
    FailField(ErrorCode::kInvalidArgument, body.Field("min_video_tokens"), "is larger than ",
              body.Field("max_video_tokens"), " (", d.budget.min_tokens, " > ", d.budget.max_tokens,
              ")");
  }
  BudgetBound min_bound;
  BudgetBound max_bound;
  if (const nlohmann::json* kwargs = body.Find("mm_processor_kwargs")) {
    const RequestObject mm(*kwargs, "mm_processor_kwargs");
    if (const nlohmann::json* size = mm.Find("size")) {
      const RequestObject size_object(*size, mm.Field("size"));
      if (auto v = size_object.Int("shortest_edge", 1, kMaxPixelBudget)) {
        min_bound.Set(*v, size_object.Field("shortest_edge"));
      }
      if (auto v = size_object.Int("longest_edge", 1, kMaxPixelBudget)) {
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

void ApplyVideoDefaults(const VideoInput& d, std::vector<VideoInput>* videos) {
  for (VideoInput& v : *videos) {
    if (v.sample_fps == 0 && v.num_frames == 0) {
      v.sample_fps = d.sample_fps;
      v.num_frames = d.num_frames;
    }
    if (v.min_frames == 0) v.min_frames = d.min_frames;
    if (v.max_frames == 0) v.max_frames = d.max_frames;
    // A part's bound, in pixels or tokens, replaces the request's in either unit.
    if (v.budget.min_pixels == 0 && v.budget.min_tokens == 0) {
      v.budget.min_pixels = d.budget.min_pixels;
      v.budget.min_tokens = d.budget.min_tokens;
    }
    if (v.budget.max_pixels == 0 && v.budget.max_tokens == 0) {
      v.budget.max_pixels = d.budget.max_pixels;
      v.budget.max_tokens = d.budget.max_tokens;
    }
  }
}

MessageLimits MessageLimitsOf(const ChatRequestPolicy& policy) {
  MessageLimits limits;
  limits.max_images = policy.max_images;
  limits.media = policy.media;
  limits.pixels_per_video_token = policy.pixels_per_video_token;
  limits.pixels_per_image_token = policy.pixels_per_image_token;
  return limits;
}

}  // namespace qvl
