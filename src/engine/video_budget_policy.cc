#include "engine/video_budget_policy.h"

#include <algorithm>

#include "base/error.h"
#include "text/chat_template.h"

namespace qvl {
namespace {

// `tokens`, or `fallback` for 0.
int64_t TokensOrDefault(const char* name, int64_t tokens, int64_t fallback) {
  if (tokens < 0) {
    Fail(ErrorCode::kInvalidArgument, name, " must not be negative (got ", tokens, ")");
  }
  return tokens == 0 ? fallback : tokens;
}

}  // namespace

ServerVideoBudget ResolveServerVideoBudget(const EngineOptions& options) {
  ServerVideoBudget b;
  b.min_tokens = TokensOrDefault("the minimum video tokens", options.min_video_tokens, 0);
  b.max_tokens =
      TokensOrDefault("the maximum video tokens", options.max_video_tokens, kDefaultMaxVideoTokens);
  if (b.min_tokens > b.max_tokens) {
    Fail(ErrorCode::kInvalidArgument, "the minimum video budget (", b.min_tokens,
         " tokens) is larger than the maximum (", b.max_tokens, " tokens)");
  }
  b.limit_tokens = std::max(
      TokensOrDefault("the video token limit", options.video_token_limit, kDefaultVideoTokenLimit),
      b.max_tokens);
  return b;
}

VideoBudget VideoBudgetFor(const ServerVideoBudget& server, const VideoBudgetRequest& request,
                           const Tokenizer& tokenizer) {
  VideoBudget b;
  b.min_pixels = request.min_pixels;
  b.max_pixels = request.max_pixels;
  b.min_frame_pixels = request.min_frame_pixels;
  b.max_frame_pixels = request.max_frame_pixels;
  b.min_tokens = request.min_tokens;
  b.max_tokens = request.max_tokens;
  b.default_min_tokens = server.min_tokens;
  b.default_max_tokens = server.max_tokens;
  b.limit_tokens = server.limit_tokens;
  b.text_tokens = [&tokenizer](std::span<const double> pair_seconds) {
    return VideoTextTokens(tokenizer, pair_seconds);
  };
  return b;
}

}  // namespace qvl
