// Shared by the 256-bit packed-format kernels: packed_avx2.cc (int8 products on vpsignb +
// vpmaddubsw + vpmaddwd) and packed_avxvnni.cc (on AVX-VNNI's vpdpbusd). The int8 tiles
// are written once over a `Products` policy that says how 4-byte groups of weight codes
// meet x codes; everything else (panel walk, Q4 decoding, block epilogue, stores) is the
// same. In an anonymous namespace so each file keeps its own copy compiled for its flags:
// no copy built with -mavxvnni may run on a CPU without it.
//
// A Products policy has:
//   Start(corr)       the int32 sum a block (Q8, Q4) or row (W8A8) starts from, given the
//                     x rows' correction -128 * sum of their codes;
//   Weights(codes)    the packed unsigned codes (value + 128) as the operand Dot takes;
//   kQ4Table          the 16 Q4 levels as Dot's weight operand;
//   Dot(acc, w, x)    acc += the four-byte dot products of w with x's codes, per lane.
// Both policies reach the same exact integer sums, so the tiers agree bit for bit.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

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
// Rows of the int8 tiles: four read a panel once for a decode step with three drafted
// tokens (or four streams), and prefill runs as fast as with two.
constexpr int kQuantRows = 4;

inline __m256i Load256(const uint8_t* p) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(p));
}

// Stores the valid columns of one 16-output panel of row i: acc + bias, or for the
// quantized formats fma(acc, row_scale, bias); added to y when r.accumulate.
inline void StorePanel(__m256 lo, __m256 hi, const PanelRange& r, int64_t i, int64_t p,
                       const float* row_scale = nullptr) {
  const int64_t col = p * kLanes;
  const int64_t cols = r.n - col;
  if (cols <= 0) return;
  alignas(32) float out[kLanes];
  _mm256_store_ps(out, lo);
  _mm256_store_ps(out + 8, hi);
  float* y = r.y + i * r.ldy + col;
  for (int64_t l = 0; l < kLanes && l < cols; ++l) {
    const float b = r.bias ? r.bias[col + l] : 0.0f;
    const float v = row_scale ? std::fma(out[l], *row_scale, b) : out[l] + b;
    y[l] = r.accumulate ? y[l] + v : v;
  }
}

// ---- Q8 / Q4 ----------------------------------------------------------------------------

template <typename Products, int MR, bool kQ4, bool kPrefetch>
void QuantTile(const QuantizedRows& x, int64_t i0, const PanelRange& r, int64_t p) {
  constexpr int64_t kGroupBytes = kQ4 ? pack::kQ4GroupBytes : pack::kQ8GroupBytes;
  constexpr int64_t kScaleOffset = kQ4 ? pack::kQ4ScaleOffset : pack::kQ8ScaleOffset;
  const int64_t blocks = x.kp / kQuantBlock;
  const uint8_t* w = r.w + p * r.panel_bytes;
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i levels = _mm256_broadcastsi128_si256(
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(Products::kQ4Table)));
  // The float sums live in L1: in registers beside the integer sums, which every step
  // updates, a 4-row tile would spill those instead.
  alignas(32) float acc[MR][kLanes] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    const int blk = static_cast<int>(b & 1);
    const uint8_t* group = w + (b >> 1) * kGroupBytes;
    if constexpr (kPrefetch) PrefetchBlockShare<kQ4>(group, blk);
    __m256i isum[MR][2];
    for (int i = 0; i < MR; ++i) {
      isum[i][0] = isum[i][1] = Products::Start(x.corr[(i0 + i) * blocks + b]);
    }
    for (int kg = 0; kg < 8; ++kg) {
      __m256i wv[2];
      for (int h = 0; h < 2; ++h) {
        if constexpr (kQ4) {
          const __m256i packed = Load256(group + blk * 256 + (kg % 4) * 64 + h * 32);
          const __m256i index = kg < 4 ? _mm256_and_si256(packed, nibble)
                                       : _mm256_and_si256(_mm256_srli_epi16(packed, 4), nibble);
          wv[h] = _mm256_shuffle_epi8(levels, index);
        } else {
          wv[h] = Products::Weights(Load256(group + blk * 512 + kg * 64 + h * 32));
        }
      }
      for (int i = 0; i < MR; ++i) {
        const __m256i xb =
            _mm256_set1_epi32(Load32(x.codes + (i0 + i) * x.kp + b * kQuantBlock + kg * 4));
        for (int h = 0; h < 2; ++h) Products::Dot(isum[i][h], wv[h], xb);
      }
    }
    const __m128i* sw = reinterpret_cast<const __m128i*>(group + kScaleOffset + blk * 32);
    const __m256 s_lo = _mm256_cvtph_ps(_mm_load_si128(sw));
    const __m256 s_hi = _mm256_cvtph_ps(_mm_load_si128(sw + 1));
    for (int i = 0; i < MR; ++i) {
      // float(isum) * 2^e is exact, as vscalefps' on the AVX-512 tiers.
      const __m256 f = _mm256_set1_ps(x.factors[(i0 + i) * blocks + b]);
      _mm256_store_ps(acc[i], _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(isum[i][0]), f),
                                              s_lo, _mm256_load_ps(acc[i])));
      _mm256_store_ps(acc[i] + 8, _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(isum[i][1]), f),
                                                  s_hi, _mm256_load_ps(acc[i] + 8)));
    }
  }
  for (int i = 0; i < MR; ++i) {
    StorePanel(_mm256_load_ps(acc[i]), _mm256_load_ps(acc[i] + 8), r, i0 + i, p,
               x.row_scales + i0 + i);
  }
}

template <typename Products, bool kQ4>
void PackedQuant(const QuantizedRows& x, int64_t m, const PanelRange& r) {
  if (m <= kStreamingRows) {
    ForTiles<kQuantRows, 1>(m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) {
      QuantTile<Products, R, kQ4, true>(x, i, r, p);
    });
  } else {
    ForTiles<kQuantRows, 1>(m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) {
      QuantTile<Products, R, kQ4, false>(x, i, r, p);
    });
  }
}

// ---- W8A8 -------------------------------------------------------------------------------

template <typename Products, int MR, bool kPrefetch>
void W8A8Tile(const RowCodes& x, int64_t i0, const PanelRange& r, int64_t p) {
  const uint8_t* w = r.w + p * r.panel_bytes;
  // The sums over all of K live in L1 and each 32-deep slice's in registers: a vpdpbusd
  // sum is a chain of dependent steps, so one chain through K would wait on its latency
  // where slices let the core start the next slice's chains beside this one's.
  alignas(32) int32_t total[MR][kLanes];
  for (int i = 0; i < MR; ++i) {
    const __m256i start = Products::Start(x.corr[i0 + i]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(total[i]), start);
    _mm256_store_si256(reinterpret_cast<__m256i*>(total[i] + 8), start);
  }
  for (int64_t t0 = 0; t0 < r.kp / 4; t0 += kQuantBlock / 4) {
    __m256i isum[MR][2];
    for (int i = 0; i < MR; ++i) isum[i][0] = isum[i][1] = _mm256_setzero_si256();
    for (int64_t t = t0; t < t0 + kQuantBlock / 4; ++t) {
      if constexpr (kPrefetch) _mm_prefetch(w + t * 64 + kPrefetchBytes, _MM_HINT_T0);
      __m256i wv[2];
      for (int h = 0; h < 2; ++h) wv[h] = Products::Weights(Load256(w + t * 64 + h * 32));
      for (int i = 0; i < MR; ++i) {
        const __m256i xb = _mm256_set1_epi32(Load32(x.codes + (i0 + i) * x.kp + 4 * t));
        for (int h = 0; h < 2; ++h) Products::Dot(isum[i][h], wv[h], xb);
      }
    }
    for (int i = 0; i < MR; ++i) {
      for (int h = 0; h < 2; ++h) {
        __m256i* sum = reinterpret_cast<__m256i*>(total[i] + 8 * h);
        _mm256_store_si256(sum, _mm256_add_epi32(_mm256_load_si256(sum), isum[i][h]));
      }
    }
  }
  const float* sw = reinterpret_cast<const float*>(w + r.kp * kLanes);
  const __m256 sw_lo = _mm256_loadu_ps(sw), sw_hi = _mm256_loadu_ps(sw + 8);
  for (int i = 0; i < MR; ++i) {
    const __m256 step = _mm256_set1_ps(x.steps[i0 + i]);
    alignas(32) float f[kLanes], s[kLanes];
    _mm256_store_ps(f, _mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<__m256i*>(total[i]))));
    _mm256_store_ps(
        f + 8, _mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<__m256i*>(total[i] + 8))));
    _mm256_store_ps(s, _mm256_mul_ps(step, sw_lo));
    _mm256_store_ps(s + 8, _mm256_mul_ps(step, sw_hi));
    const int64_t col = p * kLanes;
    float* y = r.y + (i0 + i) * r.ldy + col;
    for (int64_t l = 0; l < kLanes && l < r.n - col; ++l) {
      const float v = std::fma(f[l], s[l], r.bias ? r.bias[col + l] : 0.0f);
      y[l] = r.accumulate ? y[l] + v : v;
    }
  }
}

template <typename Products>
void PackedW8A8(const RowCodes& x, int64_t m, const PanelRange& r) {
  if (m <= kStreamingRows) {
    ForTiles<kQuantRows, 1>(m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) {
      W8A8Tile<Products, R, true>(x, i, r, p);
    });
  } else {
    ForTiles<kQuantRows, 1>(m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) {
      W8A8Tile<Products, R, false>(x, i, r, p);
    });
  }
}

}  // namespace
}  // namespace qvl::kernels
