// Packed-format kernels for ARMv8.0 Advanced SIMD, which every 64-bit ARM CPU has
// (Cortex-A53/A72, Graviton 1; the int8 products of CPUs with dotprod are in
// packed_neon_dotprod.cc). A panel's 16 outputs are four 4-lane quarters. bf16 pairs are
// widened to float (exact) and multiplied with fmla; the int8 products of one weight
// vector and a broadcast group of 4 x codes are two smull (int16, exact) whose neighbours
// sadalp adds into int32, the same exact sums as sdot. The int8 tiles are packed_neon.h's.
#include "ops/packed_neon.h"

#include <arm_neon.h>

#include <algorithm>
#include <cstdint>

#include "ops/hadamard.h"
#include "ops/packed_kernels.h"
#include "ops/packed_tiles.h"
#include "ops/weight_format.h"

namespace qvl::kernels {
namespace {

// ---- bf16 ------------------------------------------------------------------------------

// Rows as the row tile, NP panels per read of x. x is read 4 K pairs (one vector of 8
// bf16, widened to two of 4 floats) at a time, and each pair's floats are fmla's elements.
template <int MR, int NP, bool kPrefetch>
void Bf16Tile(const uint16_t* x, int64_t i0, const PanelRange& r, int64_t p0) {
  // Loops over the register arrays unroll whole, as packed_neon.h's tiles.
  float32x4_t acc[MR][NP][4];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
    for (int p = 0; p < NP; ++p)
#pragma GCC unroll 4
      for (int h = 0; h < 4; ++h) acc[i][p][h] = vdupq_n_f32(0.0f);
  const uint32x4_t high = vdupq_n_u32(0xffff0000u);
  const uint16_t* xr = x + i0 * r.kp;
  const uint8_t* w = r.w + p0 * r.panel_bytes;
  for (int64_t t0 = 0; t0 < r.kp / 2; t0 += 4, w += 4 * 64) {
    float32x4_t xv[MR][2];  // x[2 t0 .. 2 t0 + 8) of each row
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const uint16x8_t v = vld1q_u16(xr + i * r.kp + 2 * t0);
      xv[i][0] = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(v), 16));
      xv[i][1] = vreinterpretq_f32_u32(vshll_high_n_u16(v, 16));
    }
    Unrolled<4>([&](auto pair) {
      constexpr int q = decltype(pair)::value;  // K pair t0 + q: x0 in lane 2q % 4, x1 next
#pragma GCC unroll 16
      for (int p = 0; p < NP; ++p) {
        const uint8_t* wp = w + p * r.panel_bytes + q * 64;
        if constexpr (kPrefetch) __builtin_prefetch(wp + kPrefetchBytes, 0, 3);
#pragma GCC unroll 4
        for (int h = 0; h < 4; ++h) {
          const uint32x4_t v = vld1q_u32(reinterpret_cast<const uint32_t*>(wp + h * 16));
          const float32x4_t w1 = vreinterpretq_f32_u32(vandq_u32(v, high));
          const float32x4_t w0 = vreinterpretq_f32_u32(vshlq_n_u32(v, 16));
#pragma GCC unroll 16
          for (int i = 0; i < MR; ++i) {
            // (acc + x1 * w1) + x0 * w0: the products are exact, so fmla rounds as the
            // scalar twin's additions do.
            acc[i][p][h] = vfmaq_laneq_f32(acc[i][p][h], w1, xv[i][q / 2], 2 * (q % 2) + 1);
            acc[i][p][h] = vfmaq_laneq_f32(acc[i][p][h], w0, xv[i][q / 2], 2 * (q % 2));
          }
        }
      }
    });
  }
  float out[MR][NP][kLanes];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
    for (int p = 0; p < NP; ++p)
#pragma GCC unroll 4
      for (int h = 0; h < 4; ++h) vst1q_f32(out[i][p] + 4 * h, acc[i][p][h]);
  for (int i = 0; i < MR; ++i)
    for (int p = 0; p < NP; ++p) StorePanel(out[i][p], r, i0 + i, p0 + p);
}

void PackedBf16(const uint16_t* x, int64_t m, const PanelRange& r) {
  // One row reads four panels per step, so 16 sums run side by side rather than 4 chains
  // of dependent fmla; more rows share each panel read.
  if (m == 1) {
    ForTiles<1, 4>(m, r.panels,
                   [&]<int R, int P>(int64_t i, int64_t p) { Bf16Tile<R, P, true>(x, i, r, p); });
  } else if (m <= kStreamingRows) {
    ForTiles<4, 1>(m, r.panels,
                   [&]<int R, int P>(int64_t i, int64_t p) { Bf16Tile<R, P, true>(x, i, r, p); });
  } else {
    ForTiles<4, 1>(m, r.panels,
                   [&]<int R, int P>(int64_t i, int64_t p) { Bf16Tile<R, P, false>(x, i, r, p); });
  }
}

// ---- int8 products without dotprod -----------------------------------------------------

// |w * x| <= 127 * 127 fits int16; sadalp adds neighbouring products into int32, so the
// sums of outputs 0, 1 build up in two lanes each of lo, those of 2, 3 in hi.
struct WideningProducts {
  struct Acc {
    int32x4_t lo, hi;
  };
  static constexpr int kQuantRows = 2;
  static constexpr int kW8A8Rows = 2;
  static Acc Zero() { return {vdupq_n_s32(0), vdupq_n_s32(0)}; }
  template <int kLane>
  static void Dot(Acc& acc, int8x16_t w, int8x16_t x) {
    const int8x16_t xb = vreinterpretq_s8_s32(vdupq_laneq_s32(vreinterpretq_s32_s8(x), kLane));
    acc.lo = vpadalq_s16(acc.lo, vmull_s8(vget_low_s8(w), vget_low_s8(xb)));
    acc.hi = vpadalq_s16(acc.hi, vmull_high_s8(w, xb));
  }
  static int32x4_t Sum(const Acc& acc) { return vpaddq_s32(acc.lo, acc.hi); }
};

// ---- activation quantizers ---------------------------------------------------------------

// a > m ? a : m per lane, as the scalar twin's comparisons: a NaN never wins (fmax would
// return it).
inline float32x4_t MaxIgnoringNan(float32x4_t a, float32x4_t m) {
  return vbslq_f32(vcgtq_f32(a, m), a, m);
}

// round_to_even(clamp(v, -127, 127)), NaN to -127 as the scalar twin's comparisons make
// it: v is a product, so a NaN is quiet, and fmaxnm returns the number beside it.
inline int32x4_t Quantize(float32x4_t v) {
  return vcvtnq_s32_f32(vminnmq_f32(vmaxnmq_f32(v, vdupq_n_f32(-127.0f)), vdupq_n_f32(127.0f)));
}

// The 32 codes of v[0..8) * inv (narrowed: they lie in [-127, 127]) to q; returns their sum.
inline int32x4_t QuantizeBlock(const float* src, float32x4_t inv, int8_t* q) {
  int32x4_t c[8];
  for (int j = 0; j < 8; ++j) c[j] = Quantize(vmulq_f32(vld1q_f32(src + 4 * j), inv));
  int16x8_t h[4];
  for (int j = 0; j < 4; ++j) h[j] = vcombine_s16(vmovn_s32(c[2 * j]), vmovn_s32(c[2 * j + 1]));
  vst1q_s8(q, vcombine_s8(vmovn_s16(h[0]), vmovn_s16(h[1])));
  vst1q_s8(q + 16, vcombine_s8(vmovn_s16(h[2]), vmovn_s16(h[3])));
  const int32x4_t s = vaddq_s32(vaddq_s32(vaddq_s32(c[0], c[1]), vaddq_s32(c[2], c[3])),
                                vaddq_s32(vaddq_s32(c[4], c[5]), vaddq_s32(c[6], c[7])));
  return s;
}

void QuantizeRows(const float* x, int64_t ldx, int64_t m, int64_t k, const QuantizedRows& out) {
  float tail[kQuantBlock];
  // Block b of row xi, zero past column k.
  auto block = [&](const float* xi, int64_t b) {
    const float* src = xi + b * kQuantBlock;
    if (b * kQuantBlock + kQuantBlock <= k) return src;
    std::fill(tail, tail + kQuantBlock, 0.0f);
    for (int64_t c = b * kQuantBlock; c < k; ++c) tail[c - b * kQuantBlock] = xi[c];
    return static_cast<const float*>(tail);
  };
  const int64_t blocks = out.kp / kQuantBlock;
  QuantizeRowsWith(
      x, ldx, m, out,
      [&](const float* xi, float* amax) {
        for (int64_t b = 0; b < blocks; ++b) {
          const float* src = block(xi, b);
          float32x4_t a = vdupq_n_f32(0.0f);
          for (int j = 0; j < 8; ++j) a = MaxIgnoringNan(vabsq_f32(vld1q_f32(src + 4 * j)), a);
          amax[b] = vmaxvq_f32(a);  // no NaN is left to propagate
        }
      },
      [&](const float* xi, const float* inv, int8_t* q, int32_t* sums) {
        for (int64_t b = 0; b < blocks; ++b) {
          sums[b] =
              vaddvq_s32(QuantizeBlock(block(xi, b), vdupq_n_f32(inv[b]), q + b * kQuantBlock));
        }
      });
}

// Hadamard stages 1 and 2 of 4 values: [x0 + x1, x0 - x1, x2 + x3, x2 - x3], then
// [y0 + y2, y1 + y3, y0 - y2, y1 - y3]; each output one addition or subtraction, as the
// scalar stages.
inline float32x4_t Hadamard4(float32x4_t v) {
  const float32x4_t swapped = vrev64q_f32(v);
  const float32x4_t y = vtrn1q_f32(vaddq_f32(v, swapped), vsubq_f32(v, swapped));
  const float32x4_t lo = vcombine_f32(vget_low_f32(y), vget_low_f32(y));
  const float32x4_t hi = vcombine_f32(vget_high_f32(y), vget_high_f32(y));
  return vcombine_f32(vget_low_f32(vaddq_f32(lo, hi)), vget_high_f32(vsubq_f32(lo, hi)));
}

void QuantizeRowsW8A8(const float* x, int64_t ldx, int64_t m, int64_t k, const RowCodes& out) {
  const int64_t block = W8A8RotationBlock(out.kp);
  QuantizeRowsW8A8With(
      x, ldx, m, out,
      [&](const float* xi, float* rotated) {
        for (int64_t c = 0; c < out.kp; c += 8) {
          float32x4_t v[2];
          if (c + 8 <= k) {
            v[0] = vld1q_f32(xi + c);
            v[1] = vld1q_f32(xi + c + 4);
          } else {
            float tail[8] = {};
            for (int64_t j = c; j < std::min(k, c + 8); ++j) tail[j - c] = xi[j];
            v[0] = vld1q_f32(tail);
            v[1] = vld1q_f32(tail + 4);
          }
          const float32x4_t a = Hadamard4(v[0]), b = Hadamard4(v[1]);
          vst1q_f32(rotated + c, vaddq_f32(a, b));  // stage 4
          vst1q_f32(rotated + c + 4, vsubq_f32(a, b));
        }
        HadamardStagesFrom(rotated, out.kp, block, 8);
        float32x4_t amax = vdupq_n_f32(0.0f);
        for (int64_t c = 0; c < out.kp; c += 4)
          amax = MaxIgnoringNan(vabsq_f32(vld1q_f32(rotated + c)), amax);
        return vmaxvq_f32(amax);
      },
      [&](const float* rotated, float inv, int8_t* q) {
        int32x4_t sum = vdupq_n_s32(0);
        for (int64_t c = 0; c < out.kp; c += kQuantBlock)
          sum = vaddq_s32(sum, QuantizeBlock(rotated + c, vdupq_n_f32(inv), q + c));
        return vaddvq_s32(sum);
      });
}

}  // namespace

PackedKernels NeonPackedKernels() {
  return {.bf16 = PackedBf16,
          .q8 = PackedQuant<WideningProducts, false>,
          .q4 = PackedQuant<WideningProducts, true>,
          .quantize = QuantizeRows,
          .bf16_rows = 4,
          .quant_rows = WideningProducts::kQuantRows,
          .w8a8 = PackedW8A8<WideningProducts>,
          .quantize_w8a8 = QuantizeRowsW8A8,
          .w8a8_rows = WideningProducts::kW8A8Rows};
}

}  // namespace qvl::kernels
