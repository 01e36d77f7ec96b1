// Packed-format kernels for AVX2 + FMA (also used by the AVX-512 tier without VNNI /
// BF16). A panel's 16 outputs are two 8-lane halves. bf16 pairs are widened to float
// (exact) and multiplied with FMA; int8 products use vpmaddubsw + vpmaddwd on the signed
// weight values (Q4 nibbles looked up in kQ4Levels), which give the same exact integer
// block sums as the VNNI kernels. The int8 tiles are packed_avx2.h's.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ops/hadamard.h"
#include "ops/packed_avx2.h"
#include "ops/packed_kernels.h"
#include "ops/packed_tiles.h"
#include "ops/simd_avx2.h"
#include "ops/weight_format.h"

namespace qvl::kernels {
namespace {

// ---- bf16 ------------------------------------------------------------------------------

template <int MR, int NP, bool kPrefetch>
void Bf16Tile(const uint16_t* x, int64_t i0, const PanelRange& r, int64_t p0) {
  __m256 acc[MR][NP][2];
  for (int i = 0; i < MR; ++i)
    for (int p = 0; p < NP; ++p) acc[i][p][0] = acc[i][p][1] = _mm256_setzero_ps();
  const uint16_t* xr = x + i0 * r.kp;
  for (int64_t t = 0; t < r.kp / 2; ++t) {
    __m256 x0[MR], x1[MR];
    for (int i = 0; i < MR; ++i) {
      const __m256i v = _mm256_set1_epi32(Load32(xr + i * r.kp + 2 * t));
      x0[i] = avx2::EvenHalves(v);
      x1[i] = avx2::OddHalves(v);
    }
    for (int p = 0; p < NP; ++p) {
      const uint8_t* w = r.w + (p0 + p) * r.panel_bytes + t * 64;
      if constexpr (kPrefetch) _mm_prefetch(w + kPrefetchBytes, _MM_HINT_T0);
      for (int h = 0; h < 2; ++h) {
        const __m256i v = Load256(w + h * 32);
        const __m256 w0 = avx2::EvenHalves(v);
        const __m256 w1 = avx2::OddHalves(v);
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

// Signed weight values times x codes: |x| * (w with x's sign) keeps vpmaddubsw's pair sums
// below 2^15, and vpmaddwd adds the pairs into int32. No correction: the signed weights'
// sums are the integers the other tiers reach from the unsigned codes.
struct SignedProducts {
  static constexpr const int8_t* kQ4Table = kQ4Levels;
  static __m256i Start(int32_t) { return _mm256_setzero_si256(); }
  static __m256i Weights(__m256i codes) {
    return _mm256_xor_si256(codes, _mm256_set1_epi8(static_cast<char>(0x80)));
  }
  static void Dot(__m256i& acc, __m256i w, __m256i x) {
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(x), _mm256_sign_epi8(w, x));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
};

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
  const int64_t blocks = out.kp / kQuantBlock;
  QuantizeRowsWith(
      x, ldx, m, out,
      [&](const float* xi, float* amax) {
        for (int64_t b = 0; b < blocks; ++b) {
          const float* src = block(xi, b);
          __m256 a = _mm256_setzero_ps();
          // |x| first: vmaxps returns its second operand, a, for a NaN.
          for (int j = 0; j < 4; ++j)
            a = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(src + 8 * j)), a);
          amax[b] = avx2::MaxOf(a);
        }
      },
      [&](const float* xi, const float* inv_scale, int8_t* q, int32_t* sums) {
        for (int64_t b = 0; b < blocks; ++b) {
          const __m256 inv = _mm256_set1_ps(inv_scale[b]);
          const float* src = block(xi, b);
          __m256i qi[4];
          __m256i sum = _mm256_setzero_si256();
          for (int j = 0; j < 4; ++j) {
            const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(src + 8 * j), inv);
            qi[j] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
            sum = _mm256_add_epi32(sum, qi[j]);
          }
          const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(qi[0], qi[1]),
                                                    _mm256_packs_epi32(qi[2], qi[3]));
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + b * kQuantBlock),
                              _mm256_permutevar8x32_epi32(packed, order));
          sums[b] = avx2::SumOf(sum);
        }
      });
}

// ---- W8A8 -------------------------------------------------------------------------------

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
          .q8 = PackedQuant<SignedProducts, false>,
          .q4 = PackedQuant<SignedProducts, true>,
          .quantize = QuantizeRows,
          .bf16_rows = 2,
          .quant_rows = kQuantRows,
          .w8a8 = PackedW8A8<SignedProducts>,
          .quantize_w8a8 = QuantizeRowsW8A8,
          .w8a8_rows = kQuantRows};
}

}  // namespace qvl::kernels
