// Per-tier kernels of the element-wise ops (internal to ops/): norms of one row, rotary
// embedding of one head, activations, adds and a row's log-sum-exp over a span. norm.cc, rope.cc
// and activation.cc loop over rows and split large calls over the thread pool.
#pragma once

#include <cstdint>

#include "base/cpu_features.h"

namespace qvl::kernels {

struct ElementwiseKernels {
  // y = w * (x / sqrt(mean(x^2) + eps)); y may alias x.
  void (*rms_norm_row)(const float* x, const float* w, int64_t dim, float eps, float* y);
  // y = (x - mean) / sqrt(var + eps) * w + b; y may alias x.
  void (*layer_norm_row)(const float* x, const float* w, const float* b, int64_t dim, float eps,
                         float* y);
  // Rotates one head of 2*half dims in place: x[i], x[i+half] by the angle with
  // cos[i], sin[i] (rotate_half convention). With w, RMS-normalizes the head first.
  void (*rope_head)(float* x, int half, const float* cos, const float* sin, const float* w,
                    float eps);
  void (*gelu_tanh)(float* x, int64_t n);
  void (*gelu_erf)(float* x, int64_t n);
  // out = gate * sigmoid(gate) * up; out may alias gate or up.
  void (*silu_mul)(const float* gate, const float* up, int64_t n, float* out);
  // y += x.
  void (*add)(float* y, const float* x, int64_t n);
  // sum += x, lo = min(lo, x), hi = max(hi, x): one row of column statistics (a NaN in x
  // leaves lo and hi as they are).
  void (*add_min_max)(const float* x, int64_t n, float* sum, float* lo, float* hi);
  // The largest of x[0 .. n), n > 0, none NaN.
  float (*max_of)(const float* x, int64_t n);
  // The sum of e^(x[i] - shift): a log-softmax's normalizer, with shift the largest x.
  float (*sum_exp)(const float* x, int64_t n, float shift);
  // y[i] = F32ToBf16(x[i]) bit for bit (round to nearest even, NaN kept quiet; denormals
  // kept, unlike vcvtneps2bf16, which flushes them).
  void (*to_bf16)(const float* x, int64_t n, uint16_t* y);
};

ElementwiseKernels ScalarElementwiseKernels();
#if defined(__x86_64__)
ElementwiseKernels Avx2ElementwiseKernels();
ElementwiseKernels Avx512ElementwiseKernels();
#endif
#if defined(__aarch64__)
ElementwiseKernels NeonElementwiseKernels();
#endif

// The kernels for `tier` (falls back to the best lower tier that is compiled in).
ElementwiseKernels ElementwiseKernelsFor(CpuTier tier);

// The kernels of ActiveTier(), chosen once.
const ElementwiseKernels& ActiveElementwiseKernels();

}  // namespace qvl::kernels
