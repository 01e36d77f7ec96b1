#include "image/image_budget.h"

#include <algorithm>

#include "base/error.h"

namespace qvl {

int64_t PixelsPerImageToken(const ImageProcessorParams& params) {
  const int64_t factor = params.factor();
  return factor * factor;
}

ImageBudget ImageBudgetFromTokens(int64_t min_tokens, int64_t max_tokens,
                                  const ImageProcessorParams& params) {
  if (min_tokens < 0 || max_tokens < 0) {
    Fail(ErrorCode::kInvalidArgument, "image token bounds must not be negative (got min ",
         min_tokens, ", max ", max_tokens, ")");
  }
  // Above the model's range anyway; the cap keeps the product from overflowing.
  constexpr int64_t kTokenCap = int64_t{1} << 32;
  const int64_t per_token = PixelsPerImageToken(params);
  return {std::min(min_tokens, kTokenCap) * per_token, std::min(max_tokens, kTokenCap) * per_token};
}

PixelRange ResolveImageBudget(const ImageBudget& budget, const ImageProcessorParams& params) {
  if (budget.min_pixels < 0 || budget.max_pixels < 0) {
    Fail(ErrorCode::kInvalidArgument, "image pixel bounds must not be negative (got min_pixels ",
         budget.min_pixels, ", max_pixels ", budget.max_pixels, ")");
  }
  if (budget.min_pixels != 0 && budget.max_pixels != 0 && budget.min_pixels > budget.max_pixels) {
    Fail(ErrorCode::kInvalidArgument, "image min_pixels (", budget.min_pixels,
         ") is above max_pixels (", budget.max_pixels, ")");
  }
  // A bound left at 0 follows the model, but never crosses the other, given bound.
  int64_t requested_min = budget.min_pixels, requested_max = budget.max_pixels;
  if (requested_min == 0) {
    requested_min =
        requested_max != 0 ? std::min(params.min_pixels, requested_max) : params.min_pixels;
  }
  if (requested_max == 0) requested_max = std::max(params.max_pixels, requested_min);
  return {std::clamp(requested_min, params.min_pixels, params.max_pixels),
          std::clamp(requested_max, params.min_pixels, params.max_pixels)};
}

}  // namespace qvl
