// AVX2 + FMA MatMul tile kernels (compiled with -mavx2 -mfma -mf16c). Register tile: up
// to 4 rows of x times 2 rows of w, 8 lanes of K per step; the K tail is done in scalar.
#include <immintrin.h>

#include "base/bf16.h"
#include "ops/matmul_kernels.h"

namespace qvl::kernels {
namespace {

inline __m256 Load8(const float* p) { return _mm256_loadu_ps(p); }

inline __m256 Load8(const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

inline float Scalar(float v) { return v; }
inline float Scalar(uint16_t v) { return Bf16ToF32(v); }

inline float HorizontalSum(__m256 v) {
  const __m128 lo = _mm256_castps256_ps128(v);
  const __m128 hi = _mm256_extractf128_ps(v, 1);
  __m128 s = _mm_add_ps(lo, hi);
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

template <int MR, int NR, typename XT, typename WT>
void Tile(const XT* x, int64_t ldx, const WT* w, int64_t ldw, int64_t k, const float* bias,
          float* y, int64_t ldy) {
  __m256 acc[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_setzero_ps();
  const int64_t k8 = k & ~int64_t{7};
  for (int64_t p = 0; p < k8; p += 8) {
    __m256 wv[NR];
    for (int j = 0; j < NR; ++j) wv[j] = Load8(w + j * ldw + p);
    for (int i = 0; i < MR; ++i) {
      const __m256 xv = Load8(x + i * ldx + p);
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_fmadd_ps(xv, wv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) {
      float sum = HorizontalSum(acc[i][j]);
      for (int64_t p = k8; p < k; ++p) sum += Scalar(x[i * ldx + p]) * Scalar(w[j * ldw + p]);
      y[i * ldy + j] = sum + (bias ? bias[j] : 0.0f);
    }
  }
}

template <typename XT, typename WT>
void DotTileAny(const XT* x, int64_t ldx, int64_t m, const WT* w, int64_t ldw, int64_t n, int64_t k,
                const float* bias, float* y, int64_t ldy) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    int64_t j = 0;
    for (; j + 2 <= n; j += 2)
      Tile<4, 2>(x + i * ldx, ldx, w + j * ldw, ldw, k, bias ? bias + j : nullptr, y + i * ldy + j,
                 ldy);
    if (j < n)
      Tile<4, 1>(x + i * ldx, ldx, w + j * ldw, ldw, k, bias ? bias + j : nullptr, y + i * ldy + j,
                 ldy);
  }
  for (; i < m; ++i) {
    int64_t j = 0;
    for (; j + 4 <= n; j += 4)
      Tile<1, 4>(x + i * ldx, ldx, w + j * ldw, ldw, k, bias ? bias + j : nullptr, y + i * ldy + j,
                 ldy);
    for (; j < n; ++j)
      Tile<1, 1>(x + i * ldx, ldx, w + j * ldw, ldw, k, bias ? bias + j : nullptr, y + i * ldy + j,
                 ldy);
  }
}

void DotTileF32(const float* x, int64_t ldx, int64_t m, const float* w, int64_t ldw, int64_t n,
                int64_t k, const float* bias, float* y, int64_t ldy) {
  DotTileAny(x, ldx, m, w, ldw, n, k, bias, y, ldy);
}

void DotTileBf16W(const float* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t ldw, int64_t n,
                  int64_t k, const float* bias, float* y, int64_t ldy) {
  DotTileAny(x, ldx, m, w, ldw, n, k, bias, y, ldy);
}

void DotTileBf16(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t ldw,
                 int64_t n, int64_t k, const float* bias, float* y, int64_t ldy) {
  DotTileAny(x, ldx, m, w, ldw, n, k, bias, y, ldy);
}

}  // namespace

MatMulKernels Avx2MatMulKernels() { return {DotTileF32, DotTileBf16W, DotTileBf16}; }

}  // namespace qvl::kernels
