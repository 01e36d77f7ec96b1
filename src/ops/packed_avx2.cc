// Packed-format kernels for AVX2 + FMA (also used by the AVX-512 tier without VNNI /
// BF16). A panel's 16 outputs are two 8-lane halves. bf16 pairs are widened to float
// (exact) and multiplied with FMA; int8 products use vpmaddubsw + vpmaddwd on the signed
// weight values (Q4 nibbles looked up in kQ4Levels), which give the same exact integer
// block sums as the VNNI kernels.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/hadamard.h"
#include "ops/packed_kernels.h"
#include "ops/packed_tiles.h"
#include "ops/simd_avx2.h"
#include "ops/weight_format.h"
#include "ops/weight_pack_internal.h"

namespace qvl::kernels {
namespace {

constexpr int kLanes = kPanelRows;
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

// ---- bf16 ------------------------------------------------------------------------------

template <int MR, int NP, bool kPrefetch>
void Bf16Tile(const uint16_t* x, int64_t i0, const PanelRange& r, int64_t p0) {
  __m256 acc[MR][NP][2];
  for (int i = 0; i < MR; ++i)
    for (int p = 0; p < NP; ++p) acc[i][p][0] = acc[i][p][1] = _mm256_setzero_ps();
  const __m256i high = _mm256_set1_epi32(static_cast<int>(0xffff0000u));
  const uint16_t* xr = x + i0 * r.kp;
  for (int64_t t = 0; t < r.kp / 2; ++t) {
    __m256 x0[MR], x1[MR];
    for (int i = 0; i < MR; ++i) {
      const __m256i v = _mm256_set1_epi32(Load32(xr + i * r.kp + 2 * t));
      x0[i] = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
      x1[i] = _mm256_castsi256_ps(_mm256_and_si256(v, high));
    }
    for (int p = 0; p < NP; ++p) {
      const uint8_t* w = r.w + (p0 + p) * r.panel_bytes + t * 64;
      if constexpr (kPrefetch) _mm_prefetch(w + kPrefetchBytes, _MM_HINT_T0);
      for (int h = 0; h < 2; ++h) {
        const __m256i v = Load256(w + h * 32);
        const __m256 w0 = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
        const __m256 w1 = _mm256_castsi256_ps(_mm256_and_si256(v, high));
        for (int i = 0; i < MR; ++i) {
          acc[i][p][h] = _mm256_fmadd_ps(x0[i], w0, _mm256_fmadd_ps(x1[i], w1, acc[i][p][h]));
        }
      }
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int p = 0; p < NP; ++p) StorePanel(acc[i][p][0], acc[i][p][1], r, i0 + i, p0 + p);
}

void PackedBf16(const uint16_t* x, int64_t m, const PanelRange& r) {
  if (m <= kStreamingRows) {
    ForTiles<2, 2>(m, r.panels,
                   [&]<int R, int P>(int64_t i, int64_t p) { Bf16Tile<R, P, true>(x, i, r, p); });
  } else {
    ForTiles<2, 2>(m, r.panels,
                   [&]<int R, int P>(int64_t i, int64_t p) { Bf16Tile<R, P, false>(x, i, r, p); });
  }
}

// ---- Q8 / Q4 ----------------------------------------------------------------------------

// Exact int32 sums of 4-byte groups of signed weight values (in [-127, 127]) times x
// codes: |x| * (w with x's sign) keeps vpmaddubsw's pair sums below 2^15.
inline __m256i DotBytes(__m256i w, __m256i x_bcast, __m256i x_abs) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(x_abs, _mm256_sign_epi8(w, x_bcast)),
                           _mm256_set1_epi16(1));
}

template <int MR, bool kQ4, bool kPrefetch>
void QuantTile(const QuantizedRows& x, int64_t i0, const PanelRange& r, int64_t p) {
  constexpr int64_t kGroupBytes = kQ4 ? pack::kQ4GroupBytes : pack::kQ8GroupBytes;
  constexpr int64_t kScaleOffset = kQ4 ? pack::kQ4ScaleOffset : pack::kQ8ScaleOffset;
  const int64_t blocks = x.kp / kQuantBlock;
  const uint8_t* w = r.w + p * r.panel_bytes;
  const __m256i nibble = _mm256_set1_epi8(0x0f);
  const __m256i levels =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kQ4Levels)));
  const __m256i offset = _mm256_set1_epi8(static_cast<char>(0x80));
  // The float sums live in L1: in registers beside the integer sums, which every step
  // updates, a 4-row tile would spill those instead.
  alignas(32) float acc[MR][kLanes] = {};
  for (int64_t b = 0; b < blocks; ++b) {
    const int blk = static_cast<int>(b & 1);
    const uint8_t* group = w + (b >> 1) * kGroupBytes;
    if constexpr (kPrefetch) {
      // This block's share of the group's lines, so prefetches spread through the loop.
      const int64_t half = kQ4 ? 256 : 512;
      for (int64_t line = blk * half; line < (blk == 0 ? half : kGroupBytes); line += 64)
        _mm_prefetch(group + kPrefetchBytes + line, _MM_HINT_T0);
    }
    __m256i isum[MR][2];
    for (int i = 0; i < MR; ++i) isum[i][0] = isum[i][1] = _mm256_setzero_si256();
    for (int kg = 0; kg < 8; ++kg) {
      __m256i wv[2];
      for (int h = 0; h < 2; ++h) {
        if constexpr (kQ4) {
          const __m256i packed = Load256(group + blk * 256 + (kg % 4) * 64 + h * 32);
          const __m256i index = kg < 4 ? _mm256_and_si256(packed, nibble)
                                       : _mm256_and_si256(_mm256_srli_epi16(packed, 4), nibble);
          wv[h] = _mm256_shuffle_epi8(levels, index);
        } else {
          wv[h] = _mm256_xor_si256(Load256(group + blk * 512 + kg * 64 + h * 32), offset);
        }
      }
      for (int i = 0; i < MR; ++i) {
        const __m256i xb =
            _mm256_set1_epi32(Load32(x.codes + (i0 + i) * x.kp + b * kQuantBlock + kg * 4));
        const __m256i xa = _mm256_abs_epi8(xb);
        for (int h = 0; h < 2; ++h) {
          isum[i][h] = _mm256_add_epi32(isum[i][h], DotBytes(wv[h], xb, xa));
        }
      }
    }
    const __m128i* sw = reinterpret_cast<const __m128i*>(group + kScaleOffset + blk * 32);
    const __m256 s_lo = _mm256_cvtph_ps(_mm_load_si128(sw));
    const __m256 s_hi = _mm256_cvtph_ps(_mm_load_si128(sw + 1));
    for (int i = 0; i < MR; ++i) {
      // float(isum) * 2^e is exact, as vscalefps' on the AVX-512 tier.
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

template <bool kQ4>
void PackedQuant(const QuantizedRows& x, int64_t m, const PanelRange& r) {
  if (m <= kStreamingRows) {
    ForTiles<kQuantRows, 1>(m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) {
      QuantTile<R, kQ4, true>(x, i, r, p);
    });
  } else {
    ForTiles<kQuantRows, 1>(m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) {
      QuantTile<R, kQ4, false>(x, i, r, p);
    });
  }
}

void QuantizeRows(const float* x, int64_t ldx, int64_t m, int64_t k, const QuantizedRows& out) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  alignas(32) float tail[kQuantBlock];
  // Block b of row xi, zero past column k.
  auto block = [&](const float* xi, int64_t b) {
    const float* src = xi + b * kQuantBlock;
    if (b * kQuantBlock + kQuantBlock <= k) return src;
    std::fill(tail, tail + kQuantBlock, 0.0f);
    for (int64_t c = b * kQuantBlock; c < k; ++c) tail[c - b * kQuantBlock] = xi[c];
    return static_cast<const float*>(tail);
  };
  QuantizeRowsWith(
      x, ldx, m, out,
      [&](const float* xi, int64_t b) {
        const float* src = block(xi, b);
        __m256 a = _mm256_setzero_ps();
        for (int j = 0; j < 4; ++j)
          a = _mm256_max_ps(a, _mm256_andnot_ps(sign, _mm256_loadu_ps(src + 8 * j)));
        return avx2::MaxOf(a);
      },
      [&](const float* xi, int64_t b, float inv_scale, int8_t* q) {
        const __m256 inv = _mm256_set1_ps(inv_scale);
        const float* src = block(xi, b);
        __m256i qi[4];
        __m256i sum = _mm256_setzero_si256();
        for (int j = 0; j < 4; ++j) {
          const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(src + 8 * j), inv);
          qi[j] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
          sum = _mm256_add_epi32(sum, qi[j]);
        }
        const __m256i packed =
            _mm256_packs_epi16(_mm256_packs_epi32(qi[0], qi[1]), _mm256_packs_epi32(qi[2], qi[3]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(q),
                            _mm256_permutevar8x32_epi32(packed, order));
        return avx2::SumOf(sum);
      });
}

// ---- W8A8 -------------------------------------------------------------------------------

template <int MR, bool kPrefetch>
void W8A8Tile(const RowCodes& x, int64_t i0, const PanelRange& r, int64_t p) {
  const uint8_t* w = r.w + p * r.panel_bytes;
  const __m256i offset = _mm256_set1_epi8(static_cast<char>(0x80));
  __m256i isum[MR][2];
  for (int i = 0; i < MR; ++i) isum[i][0] = isum[i][1] = _mm256_setzero_si256();
  for (int64_t t = 0; t < r.kp / 4; ++t) {
    if constexpr (kPrefetch) _mm_prefetch(w + t * 64 + kPrefetchBytes, _MM_HINT_T0);
    __m256i wv[2];
    for (int h = 0; h < 2; ++h) wv[h] = _mm256_xor_si256(Load256(w + t * 64 + h * 32), offset);
    for (int i = 0; i < MR; ++i) {
      const __m256i xb = _mm256_set1_epi32(Load32(x.codes + (i0 + i) * x.kp + 4 * t));
      const __m256i xa = _mm256_abs_epi8(xb);
      for (int h = 0; h < 2; ++h) {
        isum[i][h] = _mm256_add_epi32(isum[i][h], DotBytes(wv[h], xb, xa));
      }
    }
  }
  // The signed weights' sums need no correction: they are the integers the other tiers
  // reach from the unsigned codes.
  const float* sw = reinterpret_cast<const float*>(w + r.kp * kLanes);
  const __m256 sw_lo = _mm256_loadu_ps(sw), sw_hi = _mm256_loadu_ps(sw + 8);
  for (int i = 0; i < MR; ++i) {
    const __m256 step = _mm256_set1_ps(x.steps[i0 + i]);
    const __m256 lo = _mm256_cvtepi32_ps(isum[i][0]), hi = _mm256_cvtepi32_ps(isum[i][1]);
    alignas(32) float f[kLanes], s[kLanes];
    _mm256_store_ps(f, lo);
    _mm256_store_ps(f + 8, hi);
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

void PackedW8A8(const RowCodes& x, int64_t m, const PanelRange& r) {
  if (m <= kStreamingRows) {
    ForTiles<kQuantRows, 1>(
        m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) { W8A8Tile<R, true>(x, i, r, p); });
  } else {
    ForTiles<kQuantRows, 1>(
        m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) { W8A8Tile<R, false>(x, i, r, p); });
  }
}

void QuantizeRowsW8A8(const float* x, int64_t ldx, int64_t m, int64_t k, const RowCodes& out) {
  const int64_t block = W8A8RotationBlock(out.kp);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  QuantizeRowsW8A8With(
      x, ldx, m, out,
      [&](const float* xi, float* rotated) {
        for (int64_t c = 0; c < out.kp; c += 8) {
          __m256 v;
          if (c + 8 <= k) {
            v = _mm256_loadu_ps(xi + c);
          } else {
            alignas(32) float tail[8] = {};
            for (int64_t j = c; j < k; ++j) tail[j - c] = xi[j];
            v = _mm256_load_ps(tail);
          }
          _mm256_storeu_ps(rotated + c, avx2::Hadamard8(v));
        }
        HadamardStagesFrom(rotated, out.kp, block, 8);
        __m256 amax = _mm256_setzero_ps();
        // |x| first: vmaxps returns its second operand when one is NaN.
        for (int64_t c = 0; c < out.kp; c += 8) {
          amax = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(rotated + c)), amax);
        }
        return avx2::MaxOf(amax);
      },
      [&](const float* rotated, float inv_scale, int8_t* q) {
        const __m256 inv = _mm256_set1_ps(inv_scale);
        __m256i sum = _mm256_setzero_si256();
        for (int64_t c = 0; c < out.kp; c += 32) {
          __m256i qi[4];
          for (int j = 0; j < 4; ++j) {
            const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(rotated + c + 8 * j), inv);
            qi[j] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
            sum = _mm256_add_epi32(sum, qi[j]);
          }
          const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(qi[0], qi[1]),
                                                    _mm256_packs_epi32(qi[2], qi[3]));
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + c),
                              _mm256_permutevar8x32_epi32(packed, order));
        }
        return avx2::SumOf(sum);
      });
}

}  // namespace

PackedKernels Avx2PackedKernels() {
  return {.bf16 = PackedBf16,
          .q8 = PackedQuant<false>,
          .q4 = PackedQuant<true>,
          .quantize = QuantizeRows,
          .bf16_rows = 2,
          .quant_rows = kQuantRows,
          .w8a8 = PackedW8A8,
          .quantize_w8a8 = QuantizeRowsW8A8,
          .w8a8_rows = kQuantRows};
}

}  // namespace qvl::kernels
