// Per-tier inner kernels of MatMul (internal to ops/). Each computes a tile
//   y[i, j] = dot(x[i, :K], w[j, :K]) + (bias ? bias[j] : 0),  0 <= i < m, 0 <= j < n
// with x rows ldx apart, w rows ldw elements apart, y rows ldy apart.
#pragma once

#include <cstdint>

#include "base/cpu_features.h"

namespace qvl::kernels {

// x float32, weights float32.
using DotTileF32Fn = void (*)(const float* x, int64_t ldx, int64_t m, const float* w, int64_t ldw,
                              int64_t n, int64_t k, const float* bias, float* y, int64_t ldy);
// x float32, weights bfloat16 (decoded exactly to float32).
using DotTileBf16WFn = void (*)(const float* x, int64_t ldx, int64_t m, const uint16_t* w,
                                int64_t ldw, int64_t n, int64_t k, const float* bias, float* y,
                                int64_t ldy);
// x bfloat16, weights bfloat16, float32 accumulation.
using DotTileBf16Fn = void (*)(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w,
                               int64_t ldw, int64_t n, int64_t k, const float* bias, float* y,
                               int64_t ldy);

struct MatMulKernels {
  DotTileF32Fn f32;
  DotTileBf16WFn bf16w;
  DotTileBf16Fn bf16;
};

MatMulKernels ScalarMatMulKernels();
#if defined(__x86_64__)
MatMulKernels Avx2MatMulKernels();
MatMulKernels Avx512MatMulKernels();
MatMulKernels Avx512Bf16MatMulKernels();
#endif
#if defined(__aarch64__)
MatMulKernels NeonMatMulKernels();
#endif

// The kernels for `tier` (falls back to the best lower tier that is compiled in).
MatMulKernels MatMulKernelsFor(CpuTier tier);

}  // namespace qvl::kernels
