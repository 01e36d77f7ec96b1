#include "engine/video_budget_policy.h"

#include <algorithm>

#include "base/error.h"
#include "text/chat_template.h"

namespace qvl {
namespace {

// `tokens` in pixels; 0 takes `fallback` tokens.
int64_t TokensToPixels(const char* name, int64_t tokens, int64_t fallback, int64_t per_token) {
  if (tokens < 0) {
    Fail(ErrorCode::kInvalidArgument, name, " must not be negative (got ", tokens, ")");
  }
  if (tokens == 0) tokens = fallback;
  // Above any model's range anyway; the cap keeps the product from overflowing.
  constexpr int64_t kTokenCap = int64_t{1} << 32;
  return std::min(tokens, kTokenCap) * per_token;
}

}  // namespace

ServerVideoBudget ResolveServerVideoBudget(const EngineOptions& options,
                                           const VideoProcessorParams& params) {
  const int64_t per_token = PixelsPerVideoToken(params.image);
  ServerVideoBudget b;
  b.min_pixels = TokensToPixels("the minimum video tokens", options.min_video_tokens, 0, per_token);
  b.max_pixels = TokensToPixels("the maximum video tokens", options.max_video_tokens,
                                kDefaultMaxVideoTokens, per_token);
  if (b.min_pixels > b.max_pixels) {
    Fail(ErrorCode::kInvalidArgument, "the minimum video budget (", options.min_video_tokens,
         " tokens) is larger than the maximum (", b.max_pixels / per_token, " tokens)");
  }
  b.limit_pixels = TokensToPixels("the video token limit", options.video_token_limit,
                                  kDefaultVideoTokenLimit, per_token);
  b.limit_pixels = std::max(b.limit_pixels, b.max_pixels);
  return b;
}

VideoBudget VideoBudgetFor(const ServerVideoBudget& server, const VideoBudgetRequest& request,
                           const VideoProcessorParams& params, const Tokenizer& tokenizer) {
  const int64_t per_token = PixelsPerVideoToken(params.image);
  VideoBudget b;
  b.min_pixels = request.min_pixels;
  b.max_pixels = request.max_pixels;
  b.min_frame_pixels = request.min_frame_pixels;
  b.max_frame_pixels = request.max_frame_pixels;
  b.min_tokens = request.min_tokens;
  b.max_tokens = request.max_tokens;
  b.default_min_tokens = server.min_pixels / per_token;
  b.default_max_tokens = server.max_pixels / per_token;
  b.limit_tokens = server.limit_pixels / per_token;
  b.text_tokens = [&tokenizer](std::span<const double> pair_seconds) {
    return VideoTextTokens(tokenizer, pair_seconds);
  };
  return b;
}

}  // namespace qvl
