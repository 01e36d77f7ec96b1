// Per-request image budget: how many pixels (and so image tokens) an image may turn
// into. A request can lower the model's maximum to save time or raise the minimum for
// small images; the model's preprocessor_config.json range bounds both.
#pragma once

#include <cstdint>

#include "image/preprocessor_config.h"

namespace qvl {

struct ImageBudget {
  // Area bounds for smart_resize in pixels; 0 keeps the model's value.
  int64_t min_pixels = 0;
  int64_t max_pixels = 0;
};

// The bounds smart_resize actually uses.
struct PixelRange {
  int64_t min_pixels = 0;
  int64_t max_pixels = 0;
};

// Pixels covered by one image token after merging: (patch_size * merge_size)^2, i.e.
// 32 x 32 = 1024 for Qwen3-VL.
int64_t PixelsPerImageToken(const ImageProcessorParams& params);

// A budget given in image tokens (0 keeps the model's value), for APIs that speak in
// tokens. Throws Error(kInvalidArgument) for negative counts.
ImageBudget ImageBudgetFromTokens(int64_t min_tokens, int64_t max_tokens,
                                  const ImageProcessorParams& params);

// Fills in the model's values for zeros (without crossing the other bound) and clamps
// both bounds into the model's [min_pixels, max_pixels]. Throws Error(kInvalidArgument)
// for negative values or a given minimum above a given maximum.
PixelRange ResolveImageBudget(const ImageBudget& budget, const ImageProcessorParams& params);

}  // namespace qvl
