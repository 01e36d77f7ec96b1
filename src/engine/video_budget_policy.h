// How many video tokens (and so vision-encoder seconds) each video of a request may
// become. The model's own video budget (video_preprocessor_config.json: 12,288 tokens
// over all frames) makes a 10 s 720p clip ~9,000 tokens, minutes of vision on a CPU; a
// video sent without a budget is cut to a default sized for a CPU instead, and a
// request may ask for more up to the server's limit.
#pragma once

#include <cstdint>

#include "engine/engine.h"
#include "engine/request.h"
#include "image/video_budget.h"
#include "text/tokenizer.h"

namespace qvl {

// The server's defaults when EngineOptions leaves them at 0.
inline constexpr int64_t kDefaultMaxVideoTokens = 2048;
inline constexpr int64_t kDefaultVideoTokenLimit = 8192;

// The server-wide video budget from EngineOptions, in tokens of a video's whole cost in
// the prompt (frames, timestamps, vision markers), as VideoBudget holds it; ClipBudget
// turns tokens into pixels once a clip's frames are known.
struct ServerVideoBudget {
  int64_t min_tokens = 0;    // 0 = the model's
  int64_t max_tokens = 0;    // videos whose request asks nothing
  int64_t limit_tokens = 0;  // the most a request may ask for (>= max_tokens)
};

// Throws Error(kInvalidArgument) for negative values or a minimum above the maximum.
ServerVideoBudget ResolveServerVideoBudget(const EngineOptions& options);

// The budget of one video: the request's bounds within the server's (see ClipBudget for
// how they combine once the frame count is known), its text counted by `tokenizer`'s
// tokens (which must outlive the budget).
VideoBudget VideoBudgetFor(const ServerVideoBudget& server, const VideoBudgetRequest& request,
                           const Tokenizer& tokenizer);

}  // namespace qvl
