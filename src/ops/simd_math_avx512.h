// Vector exp, exp2, sigmoid and erfc for AVX-512 kernels (include only from files built
// with the AVX-512 flags; static, so each tier file keeps its own copy). Relative error
// about 1e-7 (exp, exp2, sigmoid) and 2e-7 (erfc), against 6e-8 for float rounding.
#pragma once

#include <immintrin.h>

namespace qvl::kernels::avx512 {

// e^r for |r| <= ln(2)/2 (Cephes expf polynomial).
static inline __m512 ExpReduced(__m512 r) {
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 r2 = _mm512_mul_ps(r, r);
  return _mm512_add_ps(_mm512_fmadd_ps(p, r2, r), _mm512_set1_ps(1.0f));
}

// e^x; overflows to +inf, underflows to 0.
static inline __m512 Exp(__m512 x) {
  x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(88.8f)), _mm512_set1_ps(-104.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  return _mm512_scalef_ps(ExpReduced(r), n);
}

// 2^x (softmax in base 2); results below 2^-150 flush to 0.
static inline __m512 Exp2(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-150.0f));
  const __m512 n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 r = _mm512_mul_ps(_mm512_sub_ps(x, n), _mm512_set1_ps(0.693147180559945309f));
  return _mm512_scalef_ps(ExpReduced(r), n);
}

// 1 / (1 + e^-x).
static inline __m512 Sigmoid(__m512 x) {
  const __m512 e = Exp(_mm512_sub_ps(_mm512_setzero_ps(), x));
  return _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

// erfc(z) for z >= 0 with relative error below 2e-7 (Chebyshev fit of
// erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2)).
static inline __m512 ErfcNonNegative(__m512 z) {
  const __m512 t = _mm512_div_ps(_mm512_set1_ps(1.0f),
                                 _mm512_fmadd_ps(z, _mm512_set1_ps(0.5f), _mm512_set1_ps(1.0f)));
  __m512 p = _mm512_set1_ps(0.17087277f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.82215223f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.48851587f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.13520398f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.27886807f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.18628806f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.09678418f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.37409196f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.00002368f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.26551223f));
  p = _mm512_fnmadd_ps(z, z, p);
  return _mm512_mul_ps(t, Exp(p));
}

// Masks for the first n of 16 lanes.
static inline __mmask16 FirstLanes(int n) {
  return n >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n > 0 ? n : 0)) - 1);
}

// f32 -> bf16 with round-to-nearest-even (finite inputs), as F32ToBf16.
static inline __m256i RoundToBf16(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded, 16));
}

// 16 bf16 -> 16 f32.
static inline __m512 WidenBf16(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

}  // namespace qvl::kernels::avx512
