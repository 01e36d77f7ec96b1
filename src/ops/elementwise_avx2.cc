// AVX2 + FMA element-wise kernels: 8 lanes, masked tails; same formulas as the AVX-512
// tier (GELU through sigmoid and erfc).
#include <immintrin.h>

#include <cmath>

#include "ops/elementwise_kernels.h"
#include "ops/simd_math_avx2.h"

namespace qvl::kernels {
namespace {

using avx2::FirstLanes;

inline __m256 Load(const float* p, int64_t left) {
  if (left >= 8) return _mm256_loadu_ps(p);
  return _mm256_maskload_ps(p, FirstLanes(static_cast<int>(left)));
}
inline void Store(float* p, int64_t left, __m256 v) {
  if (left >= 8) {
    _mm256_storeu_ps(p, v);
  } else {
    _mm256_maskstore_ps(p, FirstLanes(static_cast<int>(left)), v);
  }
}

inline float HorizontalSum(__m256 v) {
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

float SumSquares(const float* x, int64_t dim) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= dim; i += 16) {
    const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    a0 = _mm256_fmadd_ps(v0, v0, a0);
    a1 = _mm256_fmadd_ps(v1, v1, a1);
  }
  for (; i < dim; i += 8) {
    const __m256 v = Load(x + i, dim - i);
    a0 = _mm256_fmadd_ps(v, v, a0);
  }
  return HorizontalSum(_mm256_add_ps(a0, a1));
}

void RmsNormRow(const float* x, const float* w, int64_t dim, float eps, float* y) {
  const __m256 iv =
      _mm256_set1_ps(1.0f / std::sqrt(SumSquares(x, dim) / static_cast<float>(dim) + eps));
  for (int64_t i = 0; i < dim; i += 8) {
    Store(y + i, dim - i,
          _mm256_mul_ps(Load(w + i, dim - i), _mm256_mul_ps(Load(x + i, dim - i), iv)));
  }
}

void LayerNormRow(const float* x, const float* w, const float* b, int64_t dim, float eps,
                  float* y) {
  __m256 s = _mm256_setzero_ps();
  for (int64_t i = 0; i < dim; i += 8) s = _mm256_add_ps(s, Load(x + i, dim - i));
  const float mean = HorizontalSum(s) / static_cast<float>(dim);
  const __m256 mv = _mm256_set1_ps(mean);
  __m256 var = _mm256_setzero_ps();
  for (int64_t i = 0; i < dim; i += 8) {
    const int64_t left = dim - i;
    const __m256 keep = _mm256_castsi256_ps(FirstLanes(static_cast<int>(left < 8 ? left : 8)));
    const __m256 c = _mm256_and_ps(_mm256_sub_ps(Load(x + i, left), mv), keep);
    var = _mm256_fmadd_ps(c, c, var);
  }
  const __m256 iv =
      _mm256_set1_ps(1.0f / std::sqrt(HorizontalSum(var) / static_cast<float>(dim) + eps));
  for (int64_t i = 0; i < dim; i += 8) {
    const int64_t left = dim - i;
    const __m256 c = _mm256_mul_ps(_mm256_sub_ps(Load(x + i, left), mv), iv);
    Store(y + i, left, _mm256_fmadd_ps(c, Load(w + i, left), Load(b + i, left)));
  }
}

void RopeHead(float* x, int half, const float* cos, const float* sin, const float* w, float eps) {
  __m256 inv = _mm256_set1_ps(1.0f);
  if (w != nullptr) {
    const int64_t d = 2 * int64_t{half};
    inv = _mm256_set1_ps(1.0f / std::sqrt(SumSquares(x, d) / static_cast<float>(d) + eps));
  }
  for (int i = 0; i < half; i += 8) {
    const int left = half - i;
    __m256 a = _mm256_mul_ps(Load(x + i, left), inv);
    __m256 b = _mm256_mul_ps(Load(x + half + i, left), inv);
    if (w != nullptr) {
      a = _mm256_mul_ps(Load(w + i, left), a);
      b = _mm256_mul_ps(Load(w + half + i, left), b);
    }
    const __m256 c = Load(cos + i, left), s = Load(sin + i, left);
    Store(x + i, left, _mm256_fmsub_ps(a, c, _mm256_mul_ps(b, s)));
    Store(x + half + i, left, _mm256_fmadd_ps(b, c, _mm256_mul_ps(a, s)));
  }
}

void GeluTanh(float* x, int64_t n) {
  const __m256 k2 = _mm256_set1_ps(2.0f * 0.7978845608028654f);
  const __m256 c = _mm256_set1_ps(0.044715f);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 v = Load(x + i, n - i);
    const __m256 v3 = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
    const __m256 u2 = _mm256_mul_ps(k2, _mm256_fmadd_ps(c, v3, v));
    Store(x + i, n - i, _mm256_mul_ps(v, avx2::Sigmoid(u2)));
  }
}

void GeluErf(float* x, int64_t n) {
  const __m256 inv_sqrt2 = _mm256_set1_ps(0.7071067811865476f);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 half = _mm256_set1_ps(0.5f);
  const __m256 two = _mm256_set1_ps(2.0f);
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 v = Load(x + i, n - i);
    const __m256 z = _mm256_mul_ps(_mm256_andnot_ps(sign, v), inv_sqrt2);
    const __m256 e = avx2::ErfcNonNegative(z);
    const __m256 neg = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ);
    const __m256 f = _mm256_blendv_ps(_mm256_sub_ps(two, e), e, neg);
    Store(x + i, n - i, _mm256_mul_ps(_mm256_mul_ps(half, v), f));
  }
}

void SiluMul(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 g = Load(gate + i, n - i);
    const __m256 u = Load(up + i, n - i);
    Store(out + i, n - i, _mm256_mul_ps(_mm256_mul_ps(g, avx2::Sigmoid(g)), u));
  }
}

void Add(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; i += 8) {
    Store(y + i, n - i, _mm256_add_ps(Load(y + i, n - i), Load(x + i, n - i)));
  }
}

}  // namespace

ElementwiseKernels Avx2ElementwiseKernels() {
  return {RmsNormRow, LayerNormRow, RopeHead, GeluTanh, GeluErf, SiluMul, Add};
}

}  // namespace qvl::kernels
