// Per-tier kernels for the packed weight formats (internal to ops/). Each kernel computes
//   y[i, j] = dot(x[i, :], W[j, :]) + (bias ? bias[j] : 0),  0 <= i < m, 0 <= j < n
// for the panels of one PackedTile, every output lane accumulating in K order: a row's
// result is bitwise the same whatever m is and however rows or panels are split.
//
// Arithmetic every tier reproduces exactly (so tiers can be compared bit for bit where
// the hardware allows):
//   Q8 / Q4: x is quantized per block of 32 to int8 codes qx with scale sx
//     (sx = amax / 127, qx = round_to_even(x * (127 / amax))); per block the integer
//     sum isum = sum(qw * qx) of the weight's integer values (q8: q; q4: kQ4Levels[nibble])
//     is exact, and acc = fma(float(isum), sw * sx, acc), blocks in K order.
//   BF16Packed: x rounded to bf16; per K pair acc = (acc + x1 * w1) + x0 * w0 (the
//     products are exact in float). AVX512-BF16's vdpbf16ps follows the same order but
//     flushes denormals, so it is compared with a tolerance.
// Integer sums may be formed in any order (they are exact), so kernels are free to split
// them over registers; the float steps may not be reordered.
#pragma once

#include <cstdint>

#include "base/cpu_features.h"

namespace qvl::kernels {

// Rows of x quantized for the Q8 / Q4 kernels; kp = padded K.
// Blocks whose largest magnitude is at most this quantize to zero (no division by ~0).
constexpr float kQuantMinAmax = 1e-30f;

struct QuantizedRows {
  const int8_t* codes = nullptr;  // [m, kp]
  const float* scales = nullptr;  // [m, kp / 32]
  const int32_t* corr = nullptr;  // [m, kp / 32]: -128 * sum of the block's codes
  int64_t kp = 0;
};

// The panels one call covers: panels [0, panels) of a packed weight starting at w.
struct PanelRange {
  const uint8_t* w = nullptr;
  int64_t panels = 0;
  int64_t panel_bytes = 0;
  int64_t kp = 0;
  const float* bias = nullptr;  // bias of column 0 of panel 0, or null
  float* y = nullptr;           // y of row 0, column 0 of panel 0
  int64_t ldy = 0;
  int64_t n = 0;  // valid columns from panel 0 (the last panel may be partial)
};

// x bf16 [m, kp], rows kp apart, zero past K.
using PackedBf16Fn = void (*)(const uint16_t* x, int64_t m, const PanelRange& r);
using PackedQuantFn = void (*)(const QuantizedRows& x, int64_t m, const PanelRange& r);
// Quantizes rows of x (k valid columns, ldx apart) to codes / scales / corr; columns
// [k, kp) become zero. corr lets kernels multiply unsigned weight codes (value + 128).
using QuantizeRowsFn = void (*)(const float* x, int64_t ldx, int64_t m, int64_t k, int64_t kp,
                                int8_t* codes, float* scales, int32_t* corr);

struct PackedKernels {
  PackedBf16Fn bf16;
  PackedQuantFn q8;
  PackedQuantFn q4;
  QuantizeRowsFn quantize;
};

PackedKernels ScalarPackedKernels();
#if defined(__x86_64__)
PackedKernels Avx2PackedKernels();
PackedKernels Avx512Bf16PackedKernels();
#endif

// The kernels for `tier` (the best lower tier compiled in where a tier has none of its own).
PackedKernels PackedKernelsFor(CpuTier tier);

}  // namespace qvl::kernels
