// AVX-512 element-wise kernels: 16 lanes, masked tails. GELU-tanh is computed as
// x * sigmoid(2u) (equal to 0.5 x (1 + tanh u)) and exact GELU through erfc, so both
// keep about 1e-7 relative error over the whole range, negative tails included.
#include <immintrin.h>

#include <cmath>

#include "ops/elementwise_kernels.h"
#include "ops/simd_math_avx512.h"

namespace qvl::kernels {
namespace {

using avx512::FirstLanes;

inline __m512 Load(const float* p, int64_t left) {
  return _mm512_maskz_loadu_ps(FirstLanes(static_cast<int>(left < 16 ? left : 16)), p);
}
inline void Store(float* p, int64_t left, __m512 v) {
  _mm512_mask_storeu_ps(p, FirstLanes(static_cast<int>(left < 16 ? left : 16)), v);
}

float SumSquares(const float* x, int64_t dim) {
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= dim; i += 32) {
    const __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
    a0 = _mm512_fmadd_ps(v0, v0, a0);
    a1 = _mm512_fmadd_ps(v1, v1, a1);
  }
  for (; i < dim; i += 16) {
    const __m512 v = Load(x + i, dim - i);
    a0 = _mm512_fmadd_ps(v, v, a0);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}

void RmsNormRow(const float* x, const float* w, int64_t dim, float eps, float* y) {
  const float inv = 1.0f / std::sqrt(SumSquares(x, dim) / static_cast<float>(dim) + eps);
  const __m512 iv = _mm512_set1_ps(inv);
  for (int64_t i = 0; i < dim; i += 16) {
    Store(y + i, dim - i,
          _mm512_mul_ps(Load(w + i, dim - i), _mm512_mul_ps(Load(x + i, dim - i), iv)));
  }
}

void LayerNormRow(const float* x, const float* w, const float* b, int64_t dim, float eps,
                  float* y) {
  __m512 s = _mm512_setzero_ps();
  for (int64_t i = 0; i < dim; i += 16) s = _mm512_add_ps(s, Load(x + i, dim - i));
  const float mean = _mm512_reduce_add_ps(s) / static_cast<float>(dim);
  const __m512 mv = _mm512_set1_ps(mean);
  __m512 var = _mm512_setzero_ps();
  for (int64_t i = 0; i < dim; i += 16) {
    const __mmask16 k = FirstLanes(static_cast<int>(dim - i < 16 ? dim - i : 16));
    const __m512 c = _mm512_maskz_sub_ps(k, _mm512_maskz_loadu_ps(k, x + i), mv);
    var = _mm512_fmadd_ps(c, c, var);
  }
  const float inv = 1.0f / std::sqrt(_mm512_reduce_add_ps(var) / static_cast<float>(dim) + eps);
  const __m512 iv = _mm512_set1_ps(inv);
  for (int64_t i = 0; i < dim; i += 16) {
    const int64_t left = dim - i;
    const __m512 c = _mm512_mul_ps(_mm512_sub_ps(Load(x + i, left), mv), iv);
    Store(y + i, left, _mm512_fmadd_ps(c, Load(w + i, left), Load(b + i, left)));
  }
}

void RopeHead(float* x, int half, const float* cos, const float* sin, const float* w, float eps) {
  __m512 inv = _mm512_set1_ps(1.0f);
  if (w != nullptr) {
    const int64_t d = 2 * int64_t{half};
    inv = _mm512_set1_ps(1.0f / std::sqrt(SumSquares(x, d) / static_cast<float>(d) + eps));
  }
  for (int i = 0; i < half; i += 16) {
    const int left = half - i;
    __m512 a = _mm512_mul_ps(Load(x + i, left), inv);
    __m512 b = _mm512_mul_ps(Load(x + half + i, left), inv);
    if (w != nullptr) {
      a = _mm512_mul_ps(Load(w + i, left), a);
      b = _mm512_mul_ps(Load(w + half + i, left), b);
    }
    const __m512 c = Load(cos + i, left), s = Load(sin + i, left);
    Store(x + i, left, _mm512_fmsub_ps(a, c, _mm512_mul_ps(b, s)));
    Store(x + half + i, left, _mm512_fmadd_ps(b, c, _mm512_mul_ps(a, s)));
  }
}

void GeluTanh(float* x, int64_t n) {
  const __m512 k2 = _mm512_set1_ps(2.0f * 0.7978845608028654f);
  const __m512 c = _mm512_set1_ps(0.044715f);
  for (int64_t i = 0; i < n; i += 16) {
    const __m512 v = Load(x + i, n - i);
    const __m512 v3 = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
    const __m512 u2 = _mm512_mul_ps(k2, _mm512_fmadd_ps(c, v3, v));
    Store(x + i, n - i, _mm512_mul_ps(v, avx512::Sigmoid(u2)));
  }
}

void GeluErf(float* x, int64_t n) {
  const __m512 inv_sqrt2 = _mm512_set1_ps(0.7071067811865476f);
  const __m512 half = _mm512_set1_ps(0.5f);
  const __m512 two = _mm512_set1_ps(2.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __m512 v = Load(x + i, n - i);
    const __m512 z = _mm512_mul_ps(_mm512_abs_ps(v), inv_sqrt2);
    const __m512 e = avx512::ErfcNonNegative(z);
    // 1 + erf(v / sqrt 2) = 2 - erfc(z) for v >= 0, erfc(z) for v < 0.
    const __mmask16 neg = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
    const __m512 f = _mm512_mask_mov_ps(_mm512_sub_ps(two, e), neg, e);
    Store(x + i, n - i, _mm512_mul_ps(_mm512_mul_ps(half, v), f));
  }
}

void SiluMul(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; i += 16) {
    const __m512 g = Load(gate + i, n - i);
    const __m512 u = Load(up + i, n - i);
    Store(out + i, n - i, _mm512_mul_ps(_mm512_mul_ps(g, avx512::Sigmoid(g)), u));
  }
}

void Add(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    Store(y + i, n - i, _mm512_add_ps(Load(y + i, n - i), Load(x + i, n - i)));
  }
}

}  // namespace

ElementwiseKernels Avx512ElementwiseKernels() {
  return {RmsNormRow, LayerNormRow, RopeHead, GeluTanh, GeluErf, SiluMul, Add};
}

}  // namespace qvl::kernels
