// Normalizations over the last dimension, row by row. With a pool, large calls are split
// over its threads by rows.
#pragma once

#include <cstdint>
#include <span>

#include "base/thread_pool.h"

namespace qvl {

// y = w * x / sqrt(mean(x^2) + eps)   (transformers' Qwen3RMSNorm, computed in f32).
// x and y rows are `stride` floats apart; y may alias x.
void RmsNorm(const float* x, const float* w, int64_t rows, int64_t dim, int64_t stride, float eps,
             float* y, ThreadPool* pool = nullptr);

// y = (x - mean) / sqrt(var + eps) * w + b   (torch.nn.LayerNorm, biased variance).
// y may alias x.
void LayerNorm(const float* x, const float* w, const float* b, int64_t rows, int64_t dim, float eps,
               float* y, ThreadPool* pool = nullptr);

// v / |v| in place, the squares summed in double (an embedding, a shortened one); a zero
// vector stays zero.
void ScaleToUnitLength(std::span<float> v);

}  // namespace qvl
