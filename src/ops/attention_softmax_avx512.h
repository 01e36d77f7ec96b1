// The online-softmax block kernel for the AVX-512 tiers, included by attention_avx512.cc
// and attention_avx512bf16.cc (which rounds probabilities with vcvtneps2bf16). In an
// anonymous namespace so each tier file keeps its own copy, compiled for its flags.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ops/attention_kernels.h"
#include "ops/simd_avx512.h"
#include "ops/simd_math.h"

namespace qvl::kernels {
namespace {

// Round(__m512) -> __m256i of 16 bf16, for T = uint16_t.
//
// Lazy rescaling: while a row's scores stay within kMaxExcess of its reference m (the
// common case once a few blocks are in), the block needs neither its maximum (a
// horizontal reduction) nor a rescale; partial sums stay in a vector (kSumLanes = 16).
template <typename T, typename Round>
void SoftmaxBlock(const float* s, int64_t lds, int rows, int cols, const int* valid,
                  float scale_log2, float* m, float* l, float* alpha, T* p, int64_t ldp,
                  Round round) {
  using avx512::FirstLanes;
  static_assert(kSumLanes == 16);
  const __m512 scale = _mm512_set1_ps(scale_log2);
  const __m512 excess = _mm512_set1_ps(kMaxExcess);
  const int chunks = (cols + 15) / 16;
  for (int r = 0; r < rows; ++r) {
    const float* sr = s + r * lds;
    T* pr = p + r * ldp;
    const int n = valid[r];
    if (n <= 0) {
      alpha[r] = 1.0f;
      std::memset(pr, 0, sizeof(T) * cols);
      continue;
    }
    __m512 x[kMaxGroups];
    __mmask16 over = 0;
    const __m512 m_old = _mm512_set1_ps(m[r]);
    for (int c = 0; c < chunks; ++c) {
      const __mmask16 k = FirstLanes(n - 16 * c);
      x[c] = _mm512_mul_ps(_mm512_loadu_ps(sr + 16 * c), scale);
      over |= _mm512_mask_cmp_ps_mask(k, x[c], _mm512_add_ps(m_old, excess), _CMP_GT_OQ);
    }
    float a = 1.0f;
    if (over != 0) {  // new reference: this block's maximum (always so for the first block)
      __m512 mx = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
      for (int c = 0; c < chunks; ++c) {
        mx = _mm512_mask_max_ps(mx, FirstLanes(n - 16 * c), mx, x[c]);
      }
      const float m_new = _mm512_reduce_max_ps(mx);
      a = m[r] == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp2(m[r] - m_new);
      m[r] = m_new;
    }
    alpha[r] = a;
    const __m512 mv = _mm512_set1_ps(m[r]);
    __m512 sum = _mm512_mul_ps(_mm512_loadu_ps(l + r * kSumLanes), _mm512_set1_ps(a));
    for (int c = 0; c < chunks; ++c) {
      const __mmask16 k = FirstLanes(n - 16 * c);
      const __m512 e =
          _mm512_maskz_mov_ps(k, simd::Exp2NonPositive<Avx512>(_mm512_sub_ps(x[c], mv)));
      sum = _mm512_add_ps(sum, e);
      const __mmask16 store = FirstLanes(cols - 16 * c);
      if constexpr (sizeof(T) == 4) {
        _mm512_mask_storeu_ps(pr + 16 * c, store, e);
      } else {
        _mm256_mask_storeu_epi16(pr + 16 * c, store, round(e));
      }
    }
    _mm512_storeu_ps(l + r * kSumLanes, sum);
  }
}

}  // namespace
}  // namespace qvl::kernels
