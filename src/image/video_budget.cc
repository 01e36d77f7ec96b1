#include "image/video_budget.h"

#include <algorithm>
#include <limits>

#include "base/error.h"
#include "image/smart_resize.h"

namespace qvl {
namespace {

constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

int64_t SaturatingProduct(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kNoLimit / b ? kNoLimit : a * b;
}

// The tighter of two maxima, 0 = not given.
int64_t TighterMax(int64_t a, int64_t b) {
  if (a == 0) return b;
  if (b == 0) return a;
  return std::min(a, b);
}

}  // namespace

int64_t PixelsPerVideoToken(const ImageProcessorParams& params) {
  return params.temporal_patch_size * PixelsPerImageToken(params);
}

int64_t MaxVideoTokens(const VideoBudget& budget) {
  // The request's within the limit, the limit over a request in pixels, the default
  // otherwise.
  if (budget.max_tokens > 0) return TighterMax(budget.max_tokens, budget.limit_tokens);
  if (budget.max_pixels > 0 || budget.max_frame_pixels > 0) return budget.limit_tokens;
  return budget.default_max_tokens;
}

ImageBudget ClipBudget(const VideoBudget& budget, const ClipShape& clip, const std::string& name) {
  for (const int64_t v :
       {budget.min_pixels, budget.max_pixels, budget.min_frame_pixels, budget.max_frame_pixels,
        budget.min_tokens, budget.max_tokens, budget.default_min_tokens, budget.default_max_tokens,
        budget.limit_tokens, clip.text_tokens}) {
    if (v < 0) Fail(ErrorCode::kInvalidArgument, "video budgets must not be negative");
  }
  // The frames' share of a budget in tokens, in pixels; 0 = no budget (or none left).
  auto frame_pixels = [&](int64_t tokens) {
    return SaturatingProduct(std::max<int64_t>(tokens - clip.text_tokens, 0),
                             clip.pixels_per_token);
  };
  const int64_t counted = SmartResizeFrameCount(clip.frames, clip.temporal_patch_size);
  const int64_t asked_pixels =
      TighterMax(budget.max_pixels, SaturatingProduct(budget.max_frame_pixels, counted));
  const int64_t max_tokens = MaxVideoTokens(budget);
  const int64_t pairs = (clip.frames + clip.temporal_patch_size - 1) / clip.temporal_patch_size;
  const int64_t least = clip.text_tokens + pairs;
  if (max_tokens > 0 && max_tokens < least) {
    // Pairs as dear as these on average: the frames the budget holds.
    const int64_t fit = std::max<int64_t>(max_tokens * pairs / least, 1) * clip.temporal_patch_size;
    const bool can_raise = budget.limit_tokens == 0 || max_tokens < budget.limit_tokens;
    Fail(ErrorCode::kInvalidArgument, name, ": its ", clip.frames, " sampled frames take at least ",
         least, " tokens (", clip.text_tokens, " for the timestamps and vision markers of its ",
         pairs, " frame pairs, one per pair for the frames), more than its video budget of ",
         max_tokens, " tokens; sample at most about ", fit,
         " frames (max_frames, num_frames or fps)", can_raise ? " or raise max_video_tokens" : "");
  }
  const int64_t limit = budget.limit_tokens > 0 ? frame_pixels(budget.limit_tokens) : kNoLimit;
  ImageBudget b;
  b.max_pixels = TighterMax(asked_pixels, frame_pixels(max_tokens));
  const int64_t asked_min =
      std::max({budget.min_pixels, SaturatingProduct(budget.min_frame_pixels, counted),
                frame_pixels(budget.min_tokens)});
  b.min_pixels = asked_min > 0 ? asked_min : frame_pixels(budget.default_min_tokens);
  if (b.max_pixels > 0 && b.min_pixels > b.max_pixels) {
    if (asked_min > 0) b.max_pixels = std::min(b.min_pixels, limit);
    b.min_pixels = std::min(b.min_pixels, b.max_pixels);
  }
  if (b.max_pixels == kNoLimit) b.max_pixels = 0;  // no cap at all: the model's
  return b;
}

}  // namespace qvl
