// AVX-512 MatMul tile kernels (compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq
// -mfma; the Bf16 variant also -mavx512bf16). Register tile: up to 4 rows of x times
// 2 rows of w, 16 (or 32 bf16) lanes of K per step, masked tails.
#include <immintrin.h>

#include "ops/matmul_kernels.h"

namespace qvl::kernels {
namespace {

inline __m512 LoadF32(const float* p, __mmask16 mask) { return _mm512_maskz_loadu_ps(mask, p); }

inline __m512 LoadBf16AsF32(const uint16_t* p, __mmask16 mask) {
  const __m256i h = _mm256_maskz_loadu_epi16(mask, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

template <int MR, int NR, typename WT>
void Tile(const float* x, int64_t ldx, const WT* w, int64_t ldw, int64_t k, const float* bias,
          float* y, int64_t ldy) {
  __m512 acc[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t p = 0; p < k; p += 16) {
    const __mmask16 mask = k - p >= 16 ? __mmask16(0xffff) : __mmask16((1u << (k - p)) - 1);
    __m512 wv[NR];
    for (int j = 0; j < NR; ++j) {
      if constexpr (sizeof(WT) == 4) {
        wv[j] = LoadF32(reinterpret_cast<const float*>(w) + j * ldw + p, mask);
      } else {
        wv[j] = LoadBf16AsF32(reinterpret_cast<const uint16_t*>(w) + j * ldw + p, mask);
      }
    }
    for (int i = 0; i < MR; ++i) {
      const __m512 xv = LoadF32(x + i * ldx + p, mask);
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_fmadd_ps(xv, wv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j)
      y[i * ldy + j] = _mm512_reduce_add_ps(acc[i][j]) + (bias ? bias[j] : 0.0f);
}

template <typename WT>
void DotTileAny(const float* x, int64_t ldx, int64_t m, const WT* w, int64_t ldw, int64_t n,
                int64_t k, const float* bias, float* y, int64_t ldy) {
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

// bf16 x bf16 without the BF16 extension: widen both to f32 (exact) and FMA.
template <int MR, int NR>
void TileBf16(const uint16_t* x, int64_t ldx, const uint16_t* w, int64_t ldw, int64_t k,
              const float* bias, float* y, int64_t ldy) {
  __m512 acc[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t p = 0; p < k; p += 16) {
    const __mmask16 mask = k - p >= 16 ? __mmask16(0xffff) : __mmask16((1u << (k - p)) - 1);
    __m512 wv[NR];
    for (int j = 0; j < NR; ++j) wv[j] = LoadBf16AsF32(w + j * ldw + p, mask);
    for (int i = 0; i < MR; ++i) {
      const __m512 xv = LoadBf16AsF32(x + i * ldx + p, mask);
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_fmadd_ps(xv, wv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j)
      y[i * ldy + j] = _mm512_reduce_add_ps(acc[i][j]) + (bias ? bias[j] : 0.0f);
}

void DotTileBf16(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t ldw,
                 int64_t n, int64_t k, const float* bias, float* y, int64_t ldy) {
  for (int64_t i = 0; i < m; ++i) {
    int64_t j = 0;
    for (; j + 4 <= n; j += 4)
      TileBf16<1, 4>(x + i * ldx, ldx, w + j * ldw, ldw, k, bias ? bias + j : nullptr,
                     y + i * ldy + j, ldy);
    for (; j < n; ++j)
      TileBf16<1, 1>(x + i * ldx, ldx, w + j * ldw, ldw, k, bias ? bias + j : nullptr,
                     y + i * ldy + j, ldy);
  }
}

}  // namespace

MatMulKernels Avx512MatMulKernels() { return {DotTileF32, DotTileBf16W, DotTileBf16}; }

}  // namespace qvl::kernels
