// Shared by the NEON packed-format kernels: packed_neon.cc (ARMv8.0: int8 products on
// smull + sadalp) and packed_neon_dotprod.cc (ARMv8.2's sdot). The int8 tiles are written
// once over a `Products` policy that says how 4-byte groups of signed weight values meet
// x codes; the panel walk, Q4 decoding, block epilogue and stores are the same. In an
// anonymous namespace so each file keeps its own copy compiled for its flags: no copy
// built with +dotprod may run on a CPU without it.
//
// A Products policy has:
//   Acc                the running int32 sums of 4 outputs (one 16-byte weight vector);
//   Zero()             an empty Acc;
//   Dot<lane>(acc, w, x)  acc += per output, the dot product of its 4 weight bytes in w
//                      with the 4 x codes in 32-bit lane `lane` of x;
//   Sum(acc)           the 4 outputs' sums as int32x4_t;
//   kQuantRows, kW8A8Rows  the row tiles its accumulators leave registers for.
// The weights are the signed values (unsigned codes XOR 0x80, or Q4 levels), so the sums
// need no correction, and every policy reaches the scalar twin's exact integers.
#pragma once

#include <arm_neon.h>

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "ops/packed_kernels.h"
#include "ops/packed_tiles.h"
#include "ops/weight_format.h"
#include "ops/weight_pack_internal.h"

namespace qvl::kernels {
namespace {

constexpr int kLanes = kPanelRows;
// Up to this many rows of x stream through the weights with software prefetches (decode);
// more rows run as tiles from cache.
constexpr int64_t kStreamingRows = 8;

// Calls f(std::integral_constant<int, 0>()) ... f(<N - 1>): lane and row indices of the
// NEON by-element instructions must be constants.
template <int N, typename F>
inline void Unrolled(const F& f) {
  [&]<int... K>(std::integer_sequence<int, K...>) { (f(std::integral_constant<int, K>()), ...); }
  (std::make_integer_sequence<int, N>());
}

// Stores the valid columns of one 16-output panel of row i from out: out + bias, or for
// the quantized formats fma(out, row_scale, bias); added to y when r.accumulate.
inline void StorePanel(const float* out, const PanelRange& r, int64_t i, int64_t p,
                       const float* row_scale = nullptr) {
  const int64_t col = p * kLanes;
  float* y = r.y + i * r.ldy + col;
  for (int64_t l = 0; l < kLanes && l < r.n - col; ++l) {
    const float b = r.bias ? r.bias[col + l] : 0.0f;
    const float v = row_scale ? std::fma(out[l], *row_scale, b) : out[l] + b;
    y[l] = r.accumulate ? y[l] + v : v;
  }
}

// Every loop over a tile's register arrays is unrolled whole (the unroll pragmas, or
// Unrolled), so each element has a constant index and stays a register: one indexed by a
// variable would live in memory, stored on every step.

// The signed values of 16 unsigned weight codes (value + 128).
inline int8x16_t SignedCodes(const uint8_t* p) {
  return vreinterpretq_s8_u8(veorq_u8(vld1q_u8(p), vdupq_n_u8(0x80)));
}

// ---- Q8 / Q4 ----------------------------------------------------------------------------

// Each block's integer sums are formed a quarter of the panel (4 outputs) at a time, so
// the tile's float sums (4 per row) stay in registers beside them: no stores in the loop.
template <typename Products, int MR, bool kQ4, bool kPrefetch>
void QuantTile(const QuantizedRows& x, int64_t i0, const PanelRange& r, int64_t p) {
  constexpr int64_t kGroupBytes = kQ4 ? pack::kQ4GroupBytes : pack::kQ8GroupBytes;
  constexpr int64_t kScaleOffset = kQ4 ? pack::kQ4ScaleOffset : pack::kQ8ScaleOffset;
  const int64_t blocks = x.kp / kQuantBlock;
  const uint8_t* w = r.w + p * r.panel_bytes;
  const int8x16_t levels = vld1q_s8(kQ4Levels);
  const uint8x16_t nibble = vdupq_n_u8(0x0f);
  float32x4_t acc[MR][4];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int h = 0; h < 4; ++h) acc[i][h] = vdupq_n_f32(0.0f);
  for (int64_t b = 0; b < blocks; ++b) {
    const int blk = static_cast<int>(b & 1);
    const uint8_t* group = w + (b >> 1) * kGroupBytes;
    if constexpr (kPrefetch) PrefetchBlockShare<kQ4>(group, blk);
    int8x16_t xv[MR][2];
    // The rows' 2^e in the lanes of one register (by-element multiplies read them).
    float32x4_t factor = vdupq_n_f32(0.0f);
    Unrolled<MR>([&](auto row) {
      constexpr int i = decltype(row)::value;
      const int8_t* xq = x.codes + (i0 + i) * x.kp + b * kQuantBlock;
      xv[i][0] = vld1q_s8(xq);
      xv[i][1] = vld1q_s8(xq + 16);
      factor = vld1q_lane_f32(x.factors + (i0 + i) * blocks + b, factor, i);
    });
    const uint16_t* sw = reinterpret_cast<const uint16_t*>(group + kScaleOffset) + blk * kLanes;
    Unrolled<4>([&](auto quarter) {
      constexpr int h = decltype(quarter)::value;
      typename Products::Acc isum[MR];
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) isum[i] = Products::Zero();
      Unrolled<4>([&](auto kgroup) {
        constexpr int g = decltype(kgroup)::value;
        int8x16_t lo, hi;  // k groups g and g + 4
        if constexpr (kQ4) {
          const uint8x16_t packed = vld1q_u8(group + blk * 256 + g * 64 + h * 16);
          lo = vqtbl1q_s8(levels, vandq_u8(packed, nibble));
          hi = vqtbl1q_s8(levels, vshrq_n_u8(packed, 4));
        } else {
          lo = SignedCodes(group + blk * 512 + g * 64 + h * 16);
          hi = SignedCodes(group + blk * 512 + (g + 4) * 64 + h * 16);
        }
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) {
          Products::template Dot<g>(isum[i], lo, xv[i][0]);
          Products::template Dot<g>(isum[i], hi, xv[i][1]);
        }
      });
      const float32x4_t scale = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(sw + 4 * h)));
      Unrolled<MR>([&](auto row) {
        constexpr int i = decltype(row)::value;
        // float(isum) * 2^e is exact, then one fma per block as the contract says.
        const float32x4_t f = vmulq_laneq_f32(vcvtq_f32_s32(Products::Sum(isum[i])), factor, i);
        acc[i][h] = vfmaq_f32(acc[i][h], f, scale);
      });
    });
  }
  // The stores take the sums from memory: an array of them whose address reached a call
  // would be kept in memory through the loop.
  float out[MR][kLanes];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int h = 0; h < 4; ++h) vst1q_f32(out[i] + 4 * h, acc[i][h]);
  for (int i = 0; i < MR; ++i) StorePanel(out[i], r, i0 + i, p, x.row_scales + i0 + i);
}

template <typename Products, bool kQ4>
void PackedQuant(const QuantizedRows& x, int64_t m, const PanelRange& r) {
  constexpr int kRows = Products::kQuantRows;
  if (m <= kStreamingRows) {
    ForTiles<kRows, 1>(m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) {
      QuantTile<Products, R, kQ4, true>(x, i, r, p);
    });
  } else {
    ForTiles<kRows, 1>(m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) {
      QuantTile<Products, R, kQ4, false>(x, i, r, p);
    });
  }
}

// ---- W8A8 -------------------------------------------------------------------------------

// One sum per output over all of K, in registers (16 per row); x is read 32 codes a time.
template <typename Products, int MR, bool kPrefetch>
void W8A8Tile(const RowCodes& x, int64_t i0, const PanelRange& r, int64_t p) {
  const uint8_t* w = r.w + p * r.panel_bytes;
  typename Products::Acc isum[MR][4];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int h = 0; h < 4; ++h) isum[i][h] = Products::Zero();
  for (int64_t t0 = 0; t0 < r.kp / 4; t0 += kQuantBlock / 4) {
    const uint8_t* slice = w + t0 * 64;
    if constexpr (kPrefetch) {
      for (int line = 0; line < 8; ++line)
        __builtin_prefetch(slice + kPrefetchBytes + line * 64, 0, 3);
    }
    int8x16_t xv[MR][2];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const int8_t* xq = x.codes + (i0 + i) * x.kp + 4 * t0;
      xv[i][0] = vld1q_s8(xq);
      xv[i][1] = vld1q_s8(xq + 16);
    }
    Unrolled<8>([&](auto kgroup) {
      constexpr int g = decltype(kgroup)::value;
#pragma GCC unroll 4
      for (int h = 0; h < 4; ++h) {
        const int8x16_t wv = SignedCodes(slice + g * 64 + h * 16);
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) Products::template Dot<g % 4>(isum[i][h], wv, xv[i][g / 4]);
      }
    });
  }
  const float* sw = reinterpret_cast<const float*>(w + r.kp * kLanes);
  const int64_t col = p * kLanes;
  Unrolled<MR>([&](auto row) {
    constexpr int i = decltype(row)::value;
    float f[kLanes], s[kLanes];
#pragma GCC unroll 4
    for (int h = 0; h < 4; ++h) {
      vst1q_f32(f + 4 * h, vcvtq_f32_s32(Products::Sum(isum[i][h])));
      vst1q_f32(s + 4 * h, vmulq_n_f32(vld1q_f32(sw + 4 * h), x.steps[i0 + i]));
    }
    float* y = r.y + (i0 + i) * r.ldy + col;
    for (int64_t l = 0; l < kLanes && l < r.n - col; ++l) {
      const float v = std::fma(f[l], s[l], r.bias ? r.bias[col + l] : 0.0f);
      y[l] = r.accumulate ? y[l] + v : v;
    }
  });
}

template <typename Products>
void PackedW8A8(const RowCodes& x, int64_t m, const PanelRange& r) {
  constexpr int kRows = Products::kW8A8Rows;
  if (m <= kStreamingRows) {
    ForTiles<kRows, 1>(m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) {
      W8A8Tile<Products, R, true>(x, i, r, p);
    });
  } else {
    ForTiles<kRows, 1>(m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) {
      W8A8Tile<Products, R, false>(x, i, r, p);
    });
  }
}

}  // namespace
}  // namespace qvl::kernels
