// AVX512-BF16 tile kernel for bf16 x bf16 products: vdpbf16ps multiplies 32 bf16 pairs
// and accumulates into 16 f32 lanes per instruction. The f32-activation kernels are
// the AVX-512 ones.
#include <immintrin.h>

#include "ops/matmul_kernels.h"
#include "ops/matmul_tiles.h"

namespace qvl::kernels {
namespace {

inline __m512bh LoadBf16x32(const uint16_t* p, __mmask32 mask) {
  return (__m512bh)_mm512_maskz_loadu_epi16(mask, p);
}

template <int MR, int NR>
void Tile(const uint16_t* x, int64_t ldx, const uint16_t* w, int64_t ldw, int64_t k,
          const float* bias, float* y, int64_t ldy) {
  __m512 acc[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t p = 0; p < k; p += 32) {
    const __mmask32 mask = k - p >= 32 ? __mmask32(0xffffffffu) : __mmask32((1u << (k - p)) - 1);
    __m512bh wv[NR];
    for (int j = 0; j < NR; ++j) wv[j] = LoadBf16x32(w + j * ldw + p, mask);
    for (int i = 0; i < MR; ++i) {
      const __m512bh xv = LoadBf16x32(x + i * ldx + p, mask);
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], xv, wv[j]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j)
      y[i * ldy + j] = _mm512_reduce_add_ps(acc[i][j]) + (bias ? bias[j] : 0.0f);
}

void DotTileBf16(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t ldw,
                 int64_t n, int64_t k, const float* bias, float* y, int64_t ldy) {
  ForDotTiles(m, n, [&]<int MR, int NR>(int64_t i, int64_t j) {
    Tile<MR, NR>(x + i * ldx, ldx, w + j * ldw, ldw, k, bias ? bias + j : nullptr, y + i * ldy + j,
                 ldy);
  });
}

}  // namespace

MatMulKernels Avx512Bf16MatMulKernels() {
  MatMulKernels k = Avx512MatMulKernels();
  k.bf16 = DotTileBf16;
  return k;
}

}  // namespace qvl::kernels
