// Per-tier kernels for the packed weight formats (internal to ops/). Each kernel computes
//   y[i, j] = dot(x[i, :], W[j, :]) + (bias ? bias[j] : 0),  0 <= i < m, 0 <= j < n
// for the panels of one PackedTile, every output lane accumulating in K order: a row's
// result is bitwise the same whatever m is and however rows or panels are split.
//
// Arithmetic every tier reproduces exactly (so tiers can be compared bit for bit where
// the hardware allows):
//   Q8 / Q4: x is quantized per block of 32 to int8 codes qx with the step c * 2^e: c is
//     one mantissa per row (kRowMantissa, chosen by ChooseBlockExponents), e per block
//     the smallest with 127 * c * 2^e >= amax; qx = round_to_even(x * inv),
//     inv = kRowMantissaInverse * 2^-e. Per block the integer sum isum = sum(qw * qx) of
//     the weight's integer values (q8: q; q4: kQ4Levels[nibble]) is exact, and
//     acc = fma(float(isum) * 2^e, sw, acc) (an exact scaling), blocks in K order; then
//     y = fma(acc, c, bias). With a power-of-two factor per block, the block's epilogue
//     is one multiply-add on the vector pipes (vscalefps runs beside the dot products);
//     a float scale per block would take two.
//   W8A8: each row of x, zero past K, is rotated like the weights (HadamardBlocks over
//     W8A8RotationBlock(kp)) and quantized with one step per row: amax = the rotated
//     row's largest magnitude, step = amax / 127, qx = round_to_even(clamp(x' * (127 /
//     amax), -127, 127)). The integer sum over all of K, isum = sum(qw * qx), is exact
//     (kW8A8MaxDepth), and y = fma(float(isum), step * sw, bias), step * sw rounded once.
//   BF16Packed: x rounded to bf16; per K pair acc = (acc + x1 * w1) + x0 * w0 (the
//     products are exact in float). AVX512-BF16's vdpbf16ps follows the same order but
//     flushes denormals, so it is compared with a tolerance.
// Integer sums may be formed in any order (they are exact), so kernels are free to split
// them over registers; the float steps may not be reordered.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "base/cpu_features.h"
#include "ops/weight_format.h"

namespace qvl::kernels {

// Blocks whose largest magnitude is at most this quantize to zero (no division by ~0),
// as do blocks holding an infinity.
constexpr float kQuantMinAmax = 1e-30f;
inline bool Quantizable(float amax) {
  return amax > kQuantMinAmax && amax <= std::numeric_limits<float>::max();
}

// The row mantissas c = 2^(j / 8) an activation row may use, and their inverses.
constexpr float kRowMantissa[8] = {1.0f,        1.09050773f, 1.18920712f, 1.29683955f,
                                   1.41421356f, 1.54221083f, 1.68179283f, 1.83400809f};
constexpr float kRowMantissaInverse[8] = {
    1.0f / 1.0f,        1.0f / 1.09050773f, 1.0f / 1.18920712f, 1.0f / 1.29683955f,
    1.0f / 1.41421356f, 1.0f / 1.54221083f, 1.0f / 1.68179283f, 1.0f / 1.83400809f};

// 2^e for -126 <= e <= 127, built from its bits (std::ldexp is a library call).
inline float Pow2(int e) {
  const uint32_t bits = static_cast<uint32_t>(e + 127) << 23;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// For one row of x: given its blocks' largest magnitudes `amax`, returns the index j of
// the row mantissa with the least total squared step (so the blocks' steps come closest
// to amax / 127) and writes each block's exponent e to `exps` (0 for zero blocks). Plain
// C++ shared by every tier, so all quantize alike.
int ChooseBlockExponents(const float* amax, int64_t blocks, float* exps);

// Rows of x quantized for the Q8 / Q4 kernels; kp = padded K.
struct QuantizedRows {
  int8_t* codes = nullptr;      // [m, kp]
  float* factors = nullptr;     // [m, kp / 32]: 2^e, 0 for zero blocks
  float* exps = nullptr;        // [m, kp / 32]: e as a float (vscalefps' operand)
  int32_t* corr = nullptr;      // [m, kp / 32]: -128 * sum of the block's codes
  float* row_scales = nullptr;  // [m]: c
  int64_t kp = 0;
  QuantizedRows Offset(int64_t rows) const {  // the same, from row `rows` on
    const int64_t blocks = kp / 32;
    return {codes + rows * kp,    factors + rows * blocks, exps + rows * blocks,
            corr + rows * blocks, row_scales + rows,       kp};
  }
};

// The quantization every tier's QuantizeRows follows; the tier supplies the two vector
// parts, each over the `blocks` blocks of a row (so a tier can reduce many blocks at
// once). row_amax(xi, amax) writes each block's largest magnitude, zero past column k, NaN
// ignored; quantize_row(xi, inv, q, sums) writes block b's 32 codes
// round_to_even(clamp(x * inv[b], -127, 127)) to q + 32 b and their sum to sums[b].
template <typename RowAmax, typename QuantizeRow>
void QuantizeRowsWith(const float* x, int64_t ldx, int64_t m, const QuantizedRows& out,
                      const RowAmax& row_amax, const QuantizeRow& quantize_row) {
  const int64_t blocks = out.kp / kQuantBlock;
  for (int64_t i = 0; i < m; ++i) {
    const float* xi = x + i * ldx;
    float* factors = out.factors + i * blocks;  // amax, then each step's inverse, then 2^e
    float* exps = out.exps + i * blocks;
    int32_t* corr = out.corr + i * blocks;  // the codes' sums until their corrections
    int8_t* codes = out.codes + i * out.kp;
    row_amax(xi, factors);
    const int mantissa = ChooseBlockExponents(factors, blocks, exps);
    out.row_scales[i] = kRowMantissa[mantissa];
    // Zero blocks quantize with inv 0 and are cleared after (an infinity times 0 is NaN).
    for (int64_t b = 0; b < blocks; ++b) {
      factors[b] = Quantizable(factors[b])
                       ? kRowMantissaInverse[mantissa] * Pow2(-static_cast<int>(exps[b]))
                       : 0.0f;
    }
    quantize_row(xi, factors, codes, corr);
    for (int64_t b = 0; b < blocks; ++b) {
      if (factors[b] == 0.0f) {
        std::memset(codes + b * kQuantBlock, 0, kQuantBlock);
        corr[b] = 0;
        continue;
      }
      corr[b] *= -128;
      factors[b] = Pow2(static_cast<int>(exps[b]));
    }
  }
}

// Rows of x quantized for the W8A8 kernels; kp = padded K.
struct RowCodes {
  int8_t* codes = nullptr;  // [m, kp]: the rotated row's codes
  float* steps = nullptr;   // [m]: amax / 127, 0 for a row that quantizes to zero
  int32_t* corr = nullptr;  // [m]: -128 * sum of the row's codes
  int64_t kp = 0;
  RowCodes Offset(int64_t rows) const {  // the same, from row `rows` on
    return {codes + rows * kp, steps + rows, corr + rows, kp};
  }
};

// The W8A8 quantization every tier's quantize_w8a8 follows; the tier supplies the two
// vector parts. rotate_row(xi, rotated) writes row xi rotated (kp values, zero past column
// k before the rotation) and returns the largest magnitude among them, NaNs ignored;
// quantize_row(rotated, inv, q) writes the kp codes round_to_even(clamp(x * inv, -127,
// 127)) (NaN becomes -127, as vmaxps / vminps make it) and returns their sum.
template <typename RotateRow, typename QuantizeRow>
void QuantizeRowsW8A8With(const float* x, int64_t ldx, int64_t m, const RowCodes& out,
                          const RotateRow& rotate_row, const QuantizeRow& quantize_row) {
  // Grows to the longest row once per thread; one row at a time stays in L1.
  thread_local std::vector<float> rotated;
  if (rotated.size() < static_cast<size_t>(out.kp)) rotated.resize(out.kp);
  for (int64_t i = 0; i < m; ++i) {
    const float amax = rotate_row(x + i * ldx, rotated.data());
    int8_t* q = out.codes + i * out.kp;
    if (!Quantizable(amax)) {
      std::memset(q, 0, out.kp);
      out.steps[i] = 0.0f;
      out.corr[i] = 0;
      continue;
    }
    out.steps[i] = amax / 127.0f;
    out.corr[i] = -128 * quantize_row(rotated.data(), 127.0f / amax, q);
  }
}

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
  // y += result (y + result, rounded once) instead of y = result.
  bool accumulate = false;
};

// x bf16 [m, kp], rows kp apart, zero past K.
using PackedBf16Fn = void (*)(const uint16_t* x, int64_t m, const PanelRange& r);
using PackedQuantFn = void (*)(const QuantizedRows& x, int64_t m, const PanelRange& r);
// Quantizes rows of x (k valid columns, ldx apart) into `out` (sized for m rows, out.kp
// columns); columns [k, kp) become zero. corr lets kernels multiply unsigned weight codes
// (value + 128).
using QuantizeRowsFn = void (*)(const float* x, int64_t ldx, int64_t m, int64_t k,
                                const QuantizedRows& out);
using PackedW8A8Fn = void (*)(const RowCodes& x, int64_t m, const PanelRange& r);
using QuantizeRowsW8A8Fn = void (*)(const float* x, int64_t ldx, int64_t m, int64_t k,
                                    const RowCodes& out);

struct PackedKernels {
  PackedBf16Fn bf16;
  PackedQuantFn q8;
  PackedQuantFn q4;
  QuantizeRowsFn quantize;
  // Rows of x a kernel multiplies per read of a weight panel (its row tile).
  int bf16_rows;
  int quant_rows;
  PackedW8A8Fn w8a8;
  QuantizeRowsW8A8Fn quantize_w8a8;
  int w8a8_rows;
};

PackedKernels ScalarPackedKernels();
#if defined(__x86_64__)
PackedKernels Avx2PackedKernels();
PackedKernels AvxVnniPackedKernels();     // int8 on 256-bit vpdpbusd, the rest as Avx2PackedKernels
PackedKernels Avx512PackedKernels();      // bf16 on 512-bit FMA, int8 on 512-bit vpmaddubsw
PackedKernels Avx512VnniPackedKernels();  // int8 on vpdpbusd, bf16 as Avx512PackedKernels
PackedKernels Avx512Bf16PackedKernels();
PackedKernels AmxPackedKernels();
#endif
#if defined(__aarch64__)
PackedKernels NeonPackedKernels();         // ARMv8.0: int8 on smull + sadalp
PackedKernels NeonDotProdPackedKernels();  // int8 on sdot, the rest as NeonPackedKernels
// int8 on usmmla for 2 rows and more, the rest (one row too) as NeonDotProdPackedKernels
PackedKernels NeonI8mmPackedKernels();
#endif

// The kernels for `tier` (the best lower tier compiled in where a tier has none of its own).
PackedKernels PackedKernelsFor(CpuTier tier);

}  // namespace qvl::kernels
