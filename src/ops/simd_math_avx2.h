// Vector exp, exp2, sigmoid and erfc for AVX2 + FMA kernels (include only from files
// built with the AVX2 flags; static, so each tier file keeps its own copy). Same
// polynomials and accuracy as simd_math_avx512.h; results below 2^-126 are not exact.
#pragma once

#include <immintrin.h>

namespace qvl::kernels::avx2 {

// e^r for |r| <= ln(2)/2 (Cephes expf polynomial).
static inline __m256 ExpReduced(__m256 r) {
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 r2 = _mm256_mul_ps(r, r);
  return _mm256_add_ps(_mm256_fmadd_ps(p, r2, r), _mm256_set1_ps(1.0f));
}

// p * 2^n for integral n in [-126, 128] (128 gives inf).
static inline __m256 Scale2(__m256 p, __m256 n) {
  const __m256i e =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

static inline __m256 Exp(__m256 x) {
  x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.7f)), _mm256_set1_ps(-87.3f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  return Scale2(ExpReduced(r), n);
}

// 2^x for x <= 0.
static inline __m256 Exp2NonPositive(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-126.0f));
  const __m256 n = _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 r = _mm256_mul_ps(_mm256_sub_ps(x, n), _mm256_set1_ps(0.693147180559945309f));
  return Scale2(ExpReduced(r), n);
}

static inline __m256 Sigmoid(__m256 x) {
  const __m256 e = Exp(_mm256_sub_ps(_mm256_setzero_ps(), x));
  return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

// erfc(z) for z >= 0, relative error below 2e-7 (see simd_math_avx512.h).
static inline __m256 ErfcNonNegative(__m256 z) {
  const __m256 t = _mm256_div_ps(_mm256_set1_ps(1.0f),
                                 _mm256_fmadd_ps(z, _mm256_set1_ps(0.5f), _mm256_set1_ps(1.0f)));
  __m256 p = _mm256_set1_ps(0.17087277f);
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.82215223f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.48851587f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.13520398f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.27886807f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.18628806f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.09678418f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.37409196f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.00002368f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.26551223f));
  p = _mm256_fnmadd_ps(z, z, p);
  return _mm256_mul_ps(t, Exp(p));
}

// Lane mask (all-ones lanes) for the first n of 8 lanes, for maskload/maskstore.
static inline __m256i FirstLanes(int n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
}

// Even (low) and odd (high) bf16 halves of 8 32-bit lanes, as f32.
static inline __m256 EvenHalves(__m256i x) { return _mm256_castsi256_ps(_mm256_slli_epi32(x, 16)); }
static inline __m256 OddHalves(__m256i x) {
  return _mm256_castsi256_ps(_mm256_and_si256(x, _mm256_set1_epi32(static_cast<int>(0xffff0000u))));
}

}  // namespace qvl::kernels::avx2
