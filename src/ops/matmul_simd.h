// The MatMul tile kernels with float accumulation, written once over a tier's Simd<T>
// (include from that tier's file only): rows of x and w widened to f32, one fused
// multiply-add per lane of K, masked K tails, a horizontal sum per output.
#pragma once

#include <cstdint>

#include "ops/matmul_kernels.h"
#include "ops/matmul_tiles.h"
#include "ops/simd.h"

namespace qvl::kernels {
namespace {
namespace matmul {

template <class T>
Vec<T> LoadAsF32(const float* p, int64_t left) {
  return Simd<T>::Load(p, left);
}
template <class T>
Vec<T> LoadAsF32(const uint16_t* p, int64_t left) {
  return Simd<T>::LoadBf16(p, left);
}

template <class T, int MR, int NR, typename XT, typename WT>
void Tile(const XT* x, int64_t ldx, const WT* w, int64_t ldw, int64_t k, const float* bias,
          float* y, int64_t ldy) {
  using S = Simd<T>;
  using V = Vec<T>;
  V acc[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = S::Zero();
  for (int64_t p = 0; p < k; p += S::kLanes) {
    V wv[NR];
    for (int j = 0; j < NR; ++j) wv[j] = LoadAsF32<T>(w + j * ldw + p, k - p);
    for (int i = 0; i < MR; ++i) {
      const V xv = LoadAsF32<T>(x + i * ldx + p, k - p);
      for (int j = 0; j < NR; ++j) acc[i][j] = S::MulAdd(xv, wv[j], acc[i][j]);
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) y[i * ldy + j] = S::ReduceAdd(acc[i][j]) + (bias ? bias[j] : 0.0f);
}

template <class T, typename XT, typename WT>
void DotTile(const XT* x, int64_t ldx, int64_t m, const WT* w, int64_t ldw, int64_t n, int64_t k,
             const float* bias, float* y, int64_t ldy) {
  ForDotTiles(m, n, [&]<int MR, int NR>(int64_t i, int64_t j) {
    Tile<T, MR, NR>(x + i * ldx, ldx, w + j * ldw, ldw, k, bias ? bias + j : nullptr,
                    y + i * ldy + j, ldy);
  });
}

}  // namespace matmul

template <class T>
MatMulKernels MatMulKernelsOf() {
  return {matmul::DotTile<T, float, float>, matmul::DotTile<T, float, uint16_t>,
          matmul::DotTile<T, uint16_t, uint16_t>};
}

}  // namespace
}  // namespace qvl::kernels
