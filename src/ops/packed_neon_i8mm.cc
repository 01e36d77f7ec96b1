// Packed-format kernels for ARM CPUs with the int8 matrix multiply extension (FEAT_I8MM:
// Neoverse N2/V1/V2, Graviton 3 and 4, Ampere One, Apple M2 on). Prefill tiles of Q8, Q4
// and W8A8 run on usmmla: one instruction multiplies 2 outputs' unsigned weight codes by
// 2 rows' x codes over 8 K into a 2 x 2 int32 tile, 32 products where sdot does 16. The
// codes are value + 128 (Q4: kQ4Codes), so each sum starts from x's correction
// -128 * sum(x) and ends at the scalar twin's exact integer. Decode (one row) keeps the
// sdot kernels, which waste no half of a row pair. Built with -march=armv8.2-a+dotprod+i8mm
// and chosen only where the CPU reports both.
//
// x is first copied as row pairs in usmmla's operand order (both rows' codes of 8 K in one
// vector), with each pair's block factors and corrections in the result's lane order, so
// the tiles load operands rather than build them. A tile of 2 row pairs keeps its x
// operands and 16 sums per pair in registers while a weight operand (2 outputs x 8 K, the
// zip of two 4-byte K groups) serves both pairs.
#include <arm_neon.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ops/packed_kernels.h"
#include "ops/packed_neon.h"
#include "ops/packed_tiles.h"
#include "ops/weight_format.h"
#include "ops/weight_pack_internal.h"

namespace qvl::kernels {
namespace {

constexpr int kTilePairs = 2;
constexpr int kTileRows = 2 * kTilePairs;

// The sdot kernels, for calls with one row.
const PackedKernels& DotKernels() {
  static const PackedKernels k = NeonDotProdPackedKernels();
  return k;
}

// x as row pairs: pair j holds rows 2j and 2j + 1 (an odd last row pairs with itself; its
// copy's results are not stored). codes + (j * kp / 8 + t) * 16 holds both rows' codes of
// K [8t, 8t + 8); factors and corr hold 4 values per pair and block in usmmla's result
// lanes: row 2j, row 2j + 1, row 2j, row 2j + 1.
struct PairedRows {
  const int8_t* codes;
  const float* factors;  // Q8 / Q4: 2^e per block
  const int32_t* corr;   // per block (Q8 / Q4) or per row (W8A8: one block of all K)
  int64_t kp;
  int64_t lane_blocks;
};

// Copies rows [0, m) of codes (kp apart) and their per-block values into buffers kept per
// thread (each thread multiplies its own panels by all of x).
PairedRows PairRows(const int8_t* codes, int64_t kp, int64_t m, const float* factors,
                    const int32_t* corr, int64_t lane_blocks) {
  thread_local std::vector<int8_t> paired;
  thread_local std::vector<float> paired_factors;
  thread_local std::vector<int32_t> paired_corr;
  const int64_t pairs = (m + 1) / 2;
  paired.resize(pairs * 2 * kp);
  paired_factors.resize(pairs * lane_blocks * 4);
  paired_corr.resize(pairs * lane_blocks * 4);
  for (int64_t j = 0; j < pairs; ++j) {
    const int64_t a = 2 * j, b = std::min(2 * j + 1, m - 1);
    const int8_t* ra = codes + a * kp;
    const int8_t* rb = codes + b * kp;
    int8_t* out = paired.data() + j * 2 * kp;
    for (int64_t t = 0; t < kp / 8; ++t) {
      vst1_s8(out + 16 * t, vld1_s8(ra + 8 * t));
      vst1_s8(out + 16 * t + 8, vld1_s8(rb + 8 * t));
    }
    for (int64_t blk = 0; blk < lane_blocks; ++blk) {
      const int64_t o = (j * lane_blocks + blk) * 4;
      for (int l = 0; l < 4; l += 2) {
        if (factors) {
          paired_factors[o + l] = factors[a * lane_blocks + blk];
          paired_factors[o + l + 1] = factors[b * lane_blocks + blk];
        }
        paired_corr[o + l] = corr[a * lane_blocks + blk];
        paired_corr[o + l + 1] = corr[b * lane_blocks + blk];
      }
    }
  }
  return {paired.data(), paired_factors.data(), paired_corr.data(), kp, lane_blocks};
}

// The weight operands of K groups g and g + 1 (vectors lo, hi: 4 outputs x 4 bytes each):
// w01 holds outputs 0 and 1 over the 8 K, w23 outputs 2 and 3.
inline void ZipGroups(uint8x16_t lo, uint8x16_t hi, uint8x16_t& w01, uint8x16_t& w23) {
  const uint32x4_t l = vreinterpretq_u32_u8(lo), h = vreinterpretq_u32_u8(hi);
  w01 = vreinterpretq_u8_u32(vzip1q_u32(l, h));
  w23 = vreinterpretq_u8_u32(vzip2q_u32(l, h));
}

// The tile's rows from sums in usmmla's lanes (sums[j][h][c]: outputs 4h + 2c and
// 4h + 2c + 1 of rows 2j, 2j + 1) to out[row].
template <int NP>
inline void KeepPairs(const float32x4_t (&sums)[NP][4][2], float (*out)[kLanes]) {
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j) {
#pragma GCC unroll 4
    for (int h = 0; h < 4; ++h) {
      vst1q_f32(out[2 * j] + 4 * h, vuzp1q_f32(sums[j][h][0], sums[j][h][1]));
      vst1q_f32(out[2 * j + 1] + 4 * h, vuzp2q_f32(sums[j][h][0], sums[j][h][1]));
    }
  }
}

// ---- Q8 / Q4 ----------------------------------------------------------------------------

// NP row pairs from pair j0 (rows 2 j0 on; `rows` of them real) times panel p.
template <int NP, bool kQ4, bool kPrefetch>
void QuantPairTile(const PairedRows& x, const QuantizedRows& xq, int64_t j0, int64_t rows,
                   const PanelRange& r, int64_t p) {
  constexpr int64_t kGroupBytes = kQ4 ? pack::kQ4GroupBytes : pack::kQ8GroupBytes;
  constexpr int64_t kScaleOffset = kQ4 ? pack::kQ4ScaleOffset : pack::kQ8ScaleOffset;
  const int64_t blocks = x.kp / kQuantBlock;
  const uint8_t* w = r.w + p * r.panel_bytes;
  const uint8x16_t codes = vld1q_u8(kQ4Codes);
  const uint8x16_t nibble = vdupq_n_u8(0x0f);
  const int8_t* xc = x.codes + j0 * 2 * x.kp;
  const float* xf = x.factors + j0 * blocks * 4;
  const int32_t* xr = x.corr + j0 * blocks * 4;
  // acc[j][h][c]: outputs 4h + 2c, 4h + 2c + 1 of pair j in usmmla's lanes.
  float32x4_t acc[NP][4][2];
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j)
#pragma GCC unroll 4
    for (int h = 0; h < 4; ++h) acc[j][h][0] = acc[j][h][1] = vdupq_n_f32(0.0f);
  for (int64_t b = 0; b < blocks; ++b) {
    const int blk = static_cast<int>(b & 1);
    const uint8_t* group = w + (b >> 1) * kGroupBytes;
    if constexpr (kPrefetch) PrefetchBlockShare<kQ4>(group, blk);
    int8x16_t xv[NP][4];
    float32x4_t factor[NP];
    int32x4_t corr[NP];
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j) {
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) xv[j][c] = vld1q_s8(xc + j * 2 * x.kp + (4 * b + c) * 16);
      factor[j] = vld1q_f32(xf + (j * blocks + b) * 4);
      corr[j] = vld1q_s32(xr + (j * blocks + b) * 4);
    }
    const uint16_t* sw = reinterpret_cast<const uint16_t*>(group + kScaleOffset) + blk * kLanes;
    Unrolled<4>([&](auto quarter) {
      constexpr int h = decltype(quarter)::value;
      int32x4_t isum[NP][2];
#pragma GCC unroll 8
      for (int j = 0; j < NP; ++j) isum[j][0] = isum[j][1] = corr[j];
      // K groups 2c, 2c + 1. Q4's packed vector g holds K groups g (low nibbles) and g + 4
      // (high): the zip of vectors 0 and 1 gives pairs 0 and 2, that of 2 and 3 pairs 1 and
      // 3, decoded after the zip, so take 0, 2, 1, 3.
      Unrolled<4>([&](auto step) {
        constexpr int c = decltype(step)::value % 2 * 2 + decltype(step)::value / 2;
        uint8x16_t w01, w23;
        if constexpr (kQ4) {
          const int g = 2 * (c % 2);
          ZipGroups(vld1q_u8(group + blk * 256 + g * 64 + h * 16),
                    vld1q_u8(group + blk * 256 + (g + 1) * 64 + h * 16), w01, w23);
          w01 = vqtbl1q_u8(codes, c < 2 ? vandq_u8(w01, nibble) : vshrq_n_u8(w01, 4));
          w23 = vqtbl1q_u8(codes, c < 2 ? vandq_u8(w23, nibble) : vshrq_n_u8(w23, 4));
        } else {
          ZipGroups(vld1q_u8(group + blk * 512 + 2 * c * 64 + h * 16),
                    vld1q_u8(group + blk * 512 + (2 * c + 1) * 64 + h * 16), w01, w23);
        }
#pragma GCC unroll 8
        for (int j = 0; j < NP; ++j) {
          isum[j][0] = vusmmlaq_s32(isum[j][0], w01, xv[j][c]);
          isum[j][1] = vusmmlaq_s32(isum[j][1], w23, xv[j][c]);
        }
      });
      const float32x4_t scale = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(sw + 4 * h)));
      const float32x4_t s01 = vzip1q_f32(scale, scale), s23 = vzip2q_f32(scale, scale);
#pragma GCC unroll 8
      for (int j = 0; j < NP; ++j) {
        // float(isum) * 2^e is exact, then one fma per block as the contract says.
        acc[j][h][0] =
            vfmaq_f32(acc[j][h][0], vmulq_f32(vcvtq_f32_s32(isum[j][0]), factor[j]), s01);
        acc[j][h][1] =
            vfmaq_f32(acc[j][h][1], vmulq_f32(vcvtq_f32_s32(isum[j][1]), factor[j]), s23);
      }
    });
  }
  float out[2 * NP][kLanes];
  KeepPairs<NP>(acc, out);
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t row = 2 * j0 + i;
    StorePanel(out[i], r, row, p, xq.row_scales + row);
  }
}

// Calls tile<NP>(j, rows) over the pairs of m rows, kTilePairs at a time, per panel.
template <typename Tile>
void ForPairTiles(int64_t m, int64_t panels, const Tile& tile) {
  const int64_t pairs = (m + 1) / 2;
  ForTiles<kTilePairs, 1>(pairs, panels, [&]<int NP, int P>(int64_t j, int64_t p) {
    tile.template operator()<NP>(j, std::min<int64_t>(2 * NP, m - 2 * j), p);
  });
}

template <bool kQ4>
void PackedQuant(const QuantizedRows& x, int64_t m, const PanelRange& r) {
  if (m == 1) return (kQ4 ? DotKernels().q4 : DotKernels().q8)(x, m, r);
  const PairedRows px = PairRows(x.codes, x.kp, m, x.factors, x.corr, x.kp / kQuantBlock);
  if (m <= kStreamingRows) {
    ForPairTiles(m, r.panels, [&]<int NP>(int64_t j, int64_t rows, int64_t p) {
      QuantPairTile<NP, kQ4, true>(px, x, j, rows, r, p);
    });
  } else {
    ForPairTiles(m, r.panels, [&]<int NP>(int64_t j, int64_t rows, int64_t p) {
      QuantPairTile<NP, kQ4, false>(px, x, j, rows, r, p);
    });
  }
}

// ---- W8A8 -------------------------------------------------------------------------------

// One sum per output over all of K in registers (16 per row pair), each starting from its
// row's correction; x is read 32 codes a time.
template <int NP, bool kPrefetch>
void W8A8PairTile(const PairedRows& x, const RowCodes& xq, int64_t j0, int64_t rows,
                  const PanelRange& r, int64_t p) {
  const uint8_t* w = r.w + p * r.panel_bytes;
  const int8_t* xc = x.codes + j0 * 2 * x.kp;
  int32x4_t isum[NP][4][2];
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j) {
    const int32x4_t corr = vld1q_s32(x.corr + (j0 + j) * 4);
#pragma GCC unroll 4
    for (int h = 0; h < 4; ++h) isum[j][h][0] = isum[j][h][1] = corr;
  }
  for (int64_t t0 = 0; t0 < r.kp / 4; t0 += kQuantBlock / 4) {
    const uint8_t* slice = w + t0 * 64;
    if constexpr (kPrefetch) {
      for (int line = 0; line < 8; ++line)
        __builtin_prefetch(slice + kPrefetchBytes + line * 64, 0, 3);
    }
    int8x16_t xv[NP][4];
#pragma GCC unroll 8
    for (int j = 0; j < NP; ++j)
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) xv[j][c] = vld1q_s8(xc + j * 2 * x.kp + (t0 / 2 + c) * 16);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
#pragma GCC unroll 4
      for (int h = 0; h < 4; ++h) {
        uint8x16_t w01, w23;
        ZipGroups(vld1q_u8(slice + 2 * c * 64 + h * 16),
                  vld1q_u8(slice + (2 * c + 1) * 64 + h * 16), w01, w23);
#pragma GCC unroll 8
        for (int j = 0; j < NP; ++j) {
          isum[j][h][0] = vusmmlaq_s32(isum[j][h][0], w01, xv[j][c]);
          isum[j][h][1] = vusmmlaq_s32(isum[j][h][1], w23, xv[j][c]);
        }
      }
    }
  }
  float32x4_t sums[NP][4][2];
#pragma GCC unroll 8
  for (int j = 0; j < NP; ++j)
#pragma GCC unroll 4
    for (int h = 0; h < 4; ++h)
      for (int c = 0; c < 2; ++c) sums[j][h][c] = vcvtq_f32_s32(isum[j][h][c]);
  float out[2 * NP][kLanes];
  KeepPairs<NP>(sums, out);
  const float* sw = reinterpret_cast<const float*>(w + r.kp * kLanes);
  const int64_t col = p * kLanes;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t row = 2 * j0 + i;
    const float step = xq.steps[row];
    float* y = r.y + row * r.ldy + col;
    for (int64_t l = 0; l < kLanes && l < r.n - col; ++l) {
      const float v = std::fma(out[i][l], sw[l] * step, r.bias ? r.bias[col + l] : 0.0f);
      y[l] = r.accumulate ? y[l] + v : v;
    }
  }
}

void PackedW8A8(const RowCodes& x, int64_t m, const PanelRange& r) {
  if (m == 1) return DotKernels().w8a8(x, m, r);
  const PairedRows px = PairRows(x.codes, x.kp, m, nullptr, x.corr, 1);
  if (m <= kStreamingRows) {
    ForPairTiles(m, r.panels, [&]<int NP>(int64_t j, int64_t rows, int64_t p) {
      W8A8PairTile<NP, true>(px, x, j, rows, r, p);
    });
  } else {
    ForPairTiles(m, r.panels, [&]<int NP>(int64_t j, int64_t rows, int64_t p) {
      W8A8PairTile<NP, false>(px, x, j, rows, r, p);
    });
  }
}

}  // namespace

PackedKernels NeonI8mmPackedKernels() {
  PackedKernels k = NeonDotProdPackedKernels();
  k.q8 = PackedQuant<false>;
  k.q4 = PackedQuant<true>;
  k.quant_rows = kTileRows;
  k.w8a8 = PackedW8A8;
  k.w8a8_rows = kTileRows;
  return k;
}

}  // namespace qvl::kernels
