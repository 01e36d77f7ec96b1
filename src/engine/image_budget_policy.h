// How many pixels (and so image tokens, and vision-encoder seconds) each image of a
// request may become. On a CPU an image's cost grows with its tokens (the 2B vision
// tower takes ~5 s for 768 tokens on 2 cores), so an image sent without a budget is cut
// to a default sized for OCR and grounding (Qwen's recommended >= 1024 tokens) rather
// than the model's 16384, and OpenAI's `detail` picks a smaller or larger one.
#pragma once

#include <cstdint>

#include "engine/engine.h"
#include "engine/request.h"
#include "image/image_budget.h"
#include "image/preprocessor_config.h"

namespace qvl {

// The server's defaults when EngineOptions leaves them at 0.
inline constexpr int64_t kDefaultMaxImageTokens = 1280;
inline constexpr int64_t kDefaultHighDetailImageTokens = 4096;
// `detail: low`: 256 tokens = 512 x 512 pixels, OpenAI's low-detail size.
inline constexpr int64_t kLowDetailImageTokens = 256;

// The server-wide budget in pixels, resolved from EngineOptions.
struct ServerImageBudget {
  int64_t min_pixels = 0;   // 0 = the model's
  int64_t max_pixels = 0;   // detail auto, and requests without their own max
  int64_t low_pixels = 0;   // detail low (never above max_pixels)
  int64_t high_pixels = 0;  // detail high; the most a request's own max may reach
};

// Throws Error(kInvalidArgument) when a pixel and a token value of the same bound
// disagree, a value is negative, or the minimum is above the maximum.
ServerImageBudget ResolveServerImageBudget(const EngineOptions& options,
                                           const ImageProcessorParams& params);

// The budget of one image: the request's own bounds where given (its max capped at
// high_pixels), else the one its detail picks; low detail never exceeds low_pixels.
ImageBudget ImageBudgetFor(const ServerImageBudget& server, const ImageBudgetRequest& request,
                           ImageDetail detail);

}  // namespace qvl
