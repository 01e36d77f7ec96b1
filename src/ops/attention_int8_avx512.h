// The float parts of the 512-bit int8 flash attention, shared by both tiers' q.k and p.v
// products (attention_int8_avx512.cc: vpmaddwd on widened operands, for AVX-512 without
// VNNI; attention_int8_avx512vnni.cc: vpdpbusd): the online softmax and the query, key and
// value quantizers. They need AVX-512F and BW only. In an anonymous namespace (included
// by files built with different flags).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <limits>

#include "ops/attention_int8_kernels.h"
#include "ops/simd_avx512.h"
#include "ops/simd_math.h"

namespace qvl::kernels {
namespace {

// Three passes over the rows: the scaled scores (kept in L1 for the third) and their
// block maxima, then the new references and scales of 16 rows at a time in vectors (one
// exp2 per row: one of alpha and 255 p_scale is 1, the other 2^-|m - mb|; a libm call
// per row and block cost more than the rest), then the probability codes. At most
// kInt8MaxRows rows.
void SoftmaxRows(const int32_t* s, int64_t lds, int rows, int cols, int valid,
                 const float* row_scale, const float* k_scale, float* m, float* l, float* alpha,
                 float* p_scale, uint8_t* p, int64_t ldp) {
  static_assert(kSumLanes == 16);
  static_assert(kMaxGroups == 4, "a full block's codes are packed from four vectors");
  const int n = valid < cols ? valid : cols;
  const int chunks = cols / 16;
  if (n <= 0) {
    EmptyBlock(rows, cols, alpha, p_scale, p, ldp);
    return;
  }
  __m512 scale[kMaxGroups];
  for (int c = 0; c < chunks; ++c) scale[c] = _mm512_loadu_ps(k_scale + 16 * c);
  alignas(64) float mb[kInt8MaxRows];
  alignas(64) float xs[kInt8MaxRows][kKeyBlock];
  for (int r = 0; r < rows; ++r) {
    const __m512 rs = _mm512_set1_ps(row_scale[r]);
    __m512 mx = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    for (int c = 0; c < chunks; ++c) {
      const __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(s + r * lds + 16 * c)),
                                     _mm512_mul_ps(scale[c], rs));
      _mm512_store_ps(xs[r] + 16 * c, x);
      mx = _mm512_mask_max_ps(mx, avx512::FirstLanes(n - 16 * c), mx, x);
    }
    mb[r] = _mm512_reduce_max_ps(mx);
  }
  const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const __m512 inv255 = _mm512_set1_ps(1.0f / 255.0f);
  for (int r0 = 0; r0 < rows; r0 += 16) {
    const __mmask16 lanes = avx512::FirstLanes(rows - r0);
    const __m512 mo = _mm512_maskz_loadu_ps(lanes, m + r0);
    const __m512 mbv = _mm512_maskz_loadu_ps(lanes, mb + r0);
    const __mmask16 first = _mm512_cmp_ps_mask(mo, neg_inf, _CMP_EQ_OQ);
    const __mmask16 grew = _mm512_cmp_ps_mask(mo, mbv, _CMP_LT_OQ);
    // |m - mb| is +inf for the first block: exp2 flushes it to 0.
    const __m512 e = simd::Exp2NonPositive<Avx512>(
        _mm512_sub_ps(_mm512_min_ps(mo, mbv), _mm512_max_ps(mo, mbv)));
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512 a = _mm512_mask_blend_ps(grew, one, e);
    const __m512 ps = _mm512_mul_ps(_mm512_mask_blend_ps(grew & ~first, e, one), inv255);
    _mm512_mask_storeu_ps(alpha + r0, lanes, _mm512_maskz_mov_ps(~first, a));
    _mm512_mask_storeu_ps(p_scale + r0, lanes, _mm512_mask_blend_ps(first, ps, inv255));
    _mm512_mask_storeu_ps(m + r0, lanes, _mm512_max_ps(mo, mbv));
  }
  // Dword j of the two packs' bytes is key quad (j % 4) of chunk j / 4 (packs work within
  // 128-bit lanes); this puts quad j at dword j.
  const __m512i quad_order =
      _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  for (int r = 0; r < rows; ++r) {
    uint8_t* pr = p + r * ldp;
    const __m512 mbv = _mm512_set1_ps(mb[r]);
    __m512i sum = _mm512_setzero_si512();
    __m512i code[kMaxGroups];
    for (int c = 0; c < chunks; ++c) {
      const __m512 e =
          simd::Exp2NonPositiveTimes255<Avx512>(_mm512_sub_ps(_mm512_load_ps(xs[r] + 16 * c), mbv));
      code[c] = _mm512_maskz_cvtps_epi32(avx512::FirstLanes(n - 16 * c), e);
      sum = _mm512_add_epi32(sum, code[c]);
    }
    if (chunks == kMaxGroups) {  // codes are 0 .. 255, so the saturating packs keep them
      const __m512i bytes = _mm512_packus_epi16(_mm512_packus_epi32(code[0], code[1]),
                                                _mm512_packus_epi32(code[2], code[3]));
      _mm512_storeu_si512(pr, _mm512_permutexvar_epi32(quad_order, bytes));
    } else {
      for (int c = 0; c < chunks; ++c) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(pr + 16 * c), _mm512_cvtusepi32_epi8(code[c]));
      }
    }
    const __m512 lv = _mm512_mul_ps(_mm512_loadu_ps(l + r * kSumLanes), _mm512_set1_ps(alpha[r]));
    _mm512_storeu_ps(l + r * kSumLanes,
                     _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_set1_ps(p_scale[r]), lv));
  }
}

// Rounds half to even (the default MXCSR mode) and clamps to -127 .. 127.
inline __m512i Codes127(__m512 x) {
  const __m512i c = _mm512_cvtps_epi32(x);
  return _mm512_max_epi32(_mm512_min_epi32(c, _mm512_set1_epi32(127)), _mm512_set1_epi32(-127));
}

void QuantizeRotated(const float* x, int64_t stride, int rows, int d, int dp, const float* center,
                     int8_t* codes, float* scale, int32_t* sum) {
  const int blocks = dp / 16;
  const __m512 quarter = _mm512_set1_ps(0.25f);
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + r * stride;
    PrefetchRowAhead(xr, stride, r, rows, d);
    __m512 y[kMaxDp / 16];
    __m512 amax = _mm512_setzero_ps();
    for (int b = 0; b < blocks; ++b) {
      const __mmask16 lanes = avx512::FirstLanes(d - 16 * b);
      __m512 v = _mm512_maskz_loadu_ps(lanes, xr + 16 * b);
      if (center != nullptr) {
        v = _mm512_maskz_sub_ps(lanes, v, _mm512_maskz_loadu_ps(lanes, center + r * dp + 16 * b));
      }
      v = _mm512_mul_ps(avx512::Hadamard16(v), quarter);
      y[b] = v;
      amax = _mm512_max_ps(amax, _mm512_abs_ps(v));
    }
    const float m = _mm512_reduce_max_ps(amax);
    const __m512 inv = _mm512_set1_ps(m > 0.0f ? 127.0f / m : 0.0f);
    __m512i total = _mm512_setzero_si512();
    for (int b = 0; b < blocks; ++b) {
      const __m512i c = Codes127(_mm512_mul_ps(y[b], inv));
      total = _mm512_add_epi32(total, c);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + r * dp + 16 * b),
                       _mm512_cvtepi32_epi8(c));
    }
    scale[r] = m / 127.0f;
    sum[r] = _mm512_reduce_add_epi32(total);
  }
}

// Four tokens' codes of 16 dims packed per dim: byte t of lane i is token t's code.
void QuantizeValues(const float* x, int64_t stride, int rows, int d, int dp, const float* mean,
                    const float* inv_scale, int8_t* group) {
  const __m512i low_byte = _mm512_set1_epi32(0xff);
  for (int quad = 0; quad < kKeyGroup / 4; ++quad) {
    for (int b = 0; b < dp / 16; ++b) {
      const __mmask16 lanes = avx512::FirstLanes(d - 16 * b);
      const __m512 mu = _mm512_maskz_loadu_ps(lanes, mean + 16 * b);
      const __m512 inv = _mm512_maskz_loadu_ps(lanes, inv_scale + 16 * b);
      __m512i packed = _mm512_setzero_si512();
      for (int t = 0; t < 4; ++t) {
        const int j = 4 * quad + t;
        if (j >= rows) break;
        const __m512 v = _mm512_maskz_loadu_ps(lanes, x + j * stride + 16 * b);
        const __m512i c = Codes127(_mm512_mul_ps(_mm512_sub_ps(v, mu), inv));
        packed = _mm512_or_si512(packed, _mm512_slli_epi32(_mm512_and_si512(c, low_byte), 8 * t));
      }
      _mm512_storeu_si512(group + (int64_t{quad} * dp + 16 * b) * 4, packed);
    }
  }
}

}  // namespace
}  // namespace qvl::kernels
