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

ImageBudget ClipBudget(const VideoBudget& budget, int64_t frames, int temporal_patch_size) {
  for (const int64_t v :
       {budget.min_pixels, budget.max_pixels, budget.min_frame_pixels, budget.max_frame_pixels,
        budget.default_min_pixels, budget.default_max_pixels, budget.limit_pixels}) {
    if (v < 0) Fail(ErrorCode::kInvalidArgument, "video pixel bounds must not be negative");
  }
  const int64_t counted = SmartResizeFrameCount(frames, temporal_patch_size);
  const int64_t asked_max =
      TighterMax(budget.max_pixels, SaturatingProduct(budget.max_frame_pixels, counted));
  const int64_t asked_min =
      std::max(budget.min_pixels, SaturatingProduct(budget.min_frame_pixels, counted));
  const int64_t limit = budget.limit_pixels > 0 ? budget.limit_pixels : kNoLimit;
  ImageBudget b;
  b.max_pixels = asked_max > 0 ? std::min(asked_max, limit) : budget.default_max_pixels;
  b.min_pixels = asked_min > 0 ? asked_min : budget.default_min_pixels;
  if (b.max_pixels > 0 && b.min_pixels > b.max_pixels) {
    if (asked_min > 0) b.max_pixels = std::min(b.min_pixels, limit);
    b.min_pixels = std::min(b.min_pixels, b.max_pixels);
  }
  if (b.max_pixels == kNoLimit) b.max_pixels = 0;  // no cap at all: the model's
  return b;
}

}  // namespace qvl
