// Element-wise activations, in place or into a separate output, and a row's log-sum-exp.
// With a pool, large calls are split over its threads.
#pragma once

#include <cstdint>

#include "base/thread_pool.h"

namespace qvl {

// gelu_pytorch_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). Vision block MLPs.
void GeluTanh(float* x, int64_t n, ThreadPool* pool = nullptr);

// Exact GELU: 0.5 x (1 + erf(x / sqrt(2))). The vision mergers.
void GeluErf(float* x, int64_t n, ThreadPool* pool = nullptr);

// out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)). The text MLP (SwiGLU).
// out may alias gate or up.
void SiluMul(const float* gate, const float* up, int64_t n, float* out, ThreadPool* pool = nullptr);

// y[i] += x[i].
void AddInPlace(float* y, const float* x, int64_t n, ThreadPool* pool = nullptr);

// log(sum of e^x[i]) over n > 0 values, none NaN: a log-softmax's normalizer (logprobs
// over the vocabulary), computed from the largest so that nothing overflows.
float LogSumExp(const float* x, int64_t n);

}  // namespace qvl
