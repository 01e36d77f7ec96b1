// Plain C++ twins of the MatMul tile kernels: the reference every SIMD tier is tested
// against, and the kernels used on CPUs without a SIMD tier. Eight partial sums let the
// compiler vectorize with baseline SSE2 / NEON.
#include "base/bf16.h"
#include "ops/matmul_kernels.h"

namespace qvl::kernels {
namespace {

template <typename XT, typename WT, typename Decode>
void DotTile(const XT* x, int64_t ldx, int64_t m, const WT* w, int64_t ldw, int64_t n, int64_t k,
             const float* bias, float* y, int64_t ldy, Decode decode) {
  for (int64_t i = 0; i < m; ++i) {
    const XT* xi = x + i * ldx;
    for (int64_t j = 0; j < n; ++j) {
      const WT* wj = w + j * ldw;
      float acc[8] = {};
      int64_t p = 0;
      for (; p + 8 <= k; p += 8) {
        for (int l = 0; l < 8; ++l) acc[l] += decode(xi[p + l]) * decode(wj[p + l]);
      }
      for (; p < k; ++p) acc[0] += decode(xi[p]) * decode(wj[p]);
      const float sum =
          ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      y[i * ldy + j] = sum + (bias ? bias[j] : 0.0f);
    }
  }
}

struct DecodeF32 {
  float operator()(float v) const { return v; }
  float operator()(uint16_t v) const { return Bf16ToF32(v); }
};

void DotTileF32(const float* x, int64_t ldx, int64_t m, const float* w, int64_t ldw, int64_t n,
                int64_t k, const float* bias, float* y, int64_t ldy) {
  DotTile(x, ldx, m, w, ldw, n, k, bias, y, ldy, DecodeF32());
}

void DotTileBf16W(const float* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t ldw, int64_t n,
                  int64_t k, const float* bias, float* y, int64_t ldy) {
  DotTile(x, ldx, m, w, ldw, n, k, bias, y, ldy, DecodeF32());
}

void DotTileBf16(const uint16_t* x, int64_t ldx, int64_t m, const uint16_t* w, int64_t ldw,
                 int64_t n, int64_t k, const float* bias, float* y, int64_t ldy) {
  DotTile(x, ldx, m, w, ldw, n, k, bias, y, ldy, DecodeF32());
}

}  // namespace

MatMulKernels ScalarMatMulKernels() { return {DotTileF32, DotTileBf16W, DotTileBf16}; }

MatMulKernels MatMulKernelsFor(CpuTier tier) {
#if defined(__x86_64__)
  switch (tier) {
    case CpuTier::kAmx:
    case CpuTier::kAvx512Bf16:
      return Avx512Bf16MatMulKernels();
    case CpuTier::kAvx512Vnni:
    case CpuTier::kAvx512:
      return Avx512MatMulKernels();
    case CpuTier::kAvxVnni:
    case CpuTier::kAvx2:
      return Avx2MatMulKernels();
    default:
      break;
  }
#endif
#if defined(__aarch64__)
  if (tier == CpuTier::kNeon) return NeonMatMulKernels();
#endif
  (void)tier;
  return ScalarMatMulKernels();
}

}  // namespace qvl::kernels
