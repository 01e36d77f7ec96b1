#include "engine/image_budget_policy.h"

#include <algorithm>

#include "base/error.h"

namespace qvl {
namespace {

// One bound given as pixels or as image tokens; 0 = not given.
int64_t BoundPixels(const char* name, int64_t pixels, int64_t tokens, int64_t per_token) {
  if (pixels < 0 || tokens < 0) {
    Fail(ErrorCode::kInvalidArgument, "the ", name, " image size must not be negative (", pixels,
         " pixels, ", tokens, " tokens)");
  }
  // Above any model's range anyway; the cap keeps the product from overflowing.
  constexpr int64_t kTokenCap = int64_t{1} << 32;
  const int64_t from_tokens = std::min(tokens, kTokenCap) * per_token;
  if (pixels != 0 && from_tokens != 0 && pixels != from_tokens) {
    Fail(ErrorCode::kInvalidArgument, "the ", name,
         " image size is given twice and disagrees: ", pixels, " pixels, and ", tokens,
         " image tokens = ", from_tokens, " pixels");
  }
  return pixels != 0 ? pixels : from_tokens;
}

}  // namespace

ServerImageBudget ResolveServerImageBudget(const EngineOptions& options,
                                           const ImageProcessorParams& params) {
  const int64_t per_token = PixelsPerImageToken(params);
  ServerImageBudget b;
  b.min_pixels = BoundPixels("minimum", options.min_pixels, options.min_image_tokens, per_token);
  b.max_pixels = BoundPixels("maximum", options.max_pixels, options.max_image_tokens, per_token);
  if (b.max_pixels == 0) b.max_pixels = kDefaultMaxImageTokens * per_token;
  if (b.min_pixels > b.max_pixels) {
    Fail(ErrorCode::kInvalidArgument, "the minimum image size (", b.min_pixels,
         " pixels) is larger than the maximum (", b.max_pixels, ")");
  }
  b.high_pixels = BoundPixels("high-detail", 0, options.high_detail_image_tokens, per_token);
  if (b.high_pixels == 0) b.high_pixels = kDefaultHighDetailImageTokens * per_token;
  b.high_pixels = std::max(b.high_pixels, b.max_pixels);
  b.low_pixels = std::min(kLowDetailImageTokens * per_token, b.max_pixels);
  return b;
}

ImageBudget ImageBudgetFor(const ServerImageBudget& server, const ImageBudgetRequest& request,
                           ImageDetail detail) {
  ImageBudget b;
  if (request.max_pixels > 0) {
    b.max_pixels = std::min(request.max_pixels, server.high_pixels);
  } else {
    b.max_pixels = detail == ImageDetail::kHigh ? server.high_pixels : server.max_pixels;
  }
  if (detail == ImageDetail::kLow) b.max_pixels = std::min(b.max_pixels, server.low_pixels);
  b.min_pixels = request.min_pixels > 0 ? request.min_pixels : server.min_pixels;
  // A request may ask for a minimum above the maximum it gets: its own minimum wins (as
  // far as high_pixels allows), the server's gives way.
  if (b.min_pixels > b.max_pixels) {
    if (request.min_pixels > 0) b.max_pixels = std::min(b.min_pixels, server.high_pixels);
    b.min_pixels = std::min(b.min_pixels, b.max_pixels);
  }
  return b;
}

}  // namespace qvl
