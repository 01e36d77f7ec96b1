// Rotary position embedding in the "rotate_half" (NeoX) layout: dimension i is paired with
// i + d/2. The caller computes the angles (1-D, M-RoPE or 2-D vision); this applies them.
#pragma once

#include <cstdint>

#include "base/thread_pool.h"

namespace qvl {

// For each token t and head h of x [tokens, heads, d] (token rows `stride` floats apart):
//   x'[i]       = x[i] cos[t][i] - x[i + d/2] sin[t][i]
//   x'[i + d/2] = x[i + d/2] cos[t][i] + x[i] sin[t][i],   i < d/2
// cos and sin are [tokens, d/2]. With a pool, large calls are split over tokens.
void ApplyRope(float* x, int64_t tokens, int heads, int head_dim, int64_t stride, const float* cos,
               const float* sin, ThreadPool* pool = nullptr);

// Qwen3's per-head q/k norm fused with the rotation: each head is first replaced by
// w * x / sqrt(mean(x^2) + eps) (w has head_dim weights), then rotated as ApplyRope.
void RmsNormRope(float* x, const float* w, float eps, int64_t tokens, int heads, int head_dim,
                 int64_t stride, const float* cos, const float* sin, ThreadPool* pool = nullptr);

}  // namespace qvl
