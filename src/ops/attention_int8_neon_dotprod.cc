// NEON int8 flash-attention products on sdot (ARMv8.2 dotprod: Graviton 2 on, Neoverse,
// Ampere, Cortex-A76 and later, Apple): one sdot by element multiplies 4 outputs' quads
// (a key's 4 dims, or a dim's 4 keys: attention_int8_neon.h) by one quad of a row held in
// a register lane, 16 products per instruction against smull's 8. 4 rows x 16 outputs:
// 16 accumulators, 4 row registers (16 quads each) and 4 operand registers. The softmax
// and the quantizers are the ARMv8.0 tier's. Built with +dotprod, chosen by
// Int8AttentionKernelsFor only where the CPU reports it.
#include <arm_neon.h>

#include <cstdint>
#include <utility>

#include "ops/attention_int8_kernels.h"
#include "ops/attention_int8_neon.h"
#include "ops/attention_tiles.h"

namespace qvl::kernels {
namespace {

struct SdotProducts {
  static constexpr int kRows = 4;

  template <int MR>
  static void Tile(const int8_t* a, int64_t lda, const int8_t* b, int64_t bstride, int quads,
                   int32x4_t (&out)[MR][4]) {
    QVL_UNROLL_TILE
    for (int r = 0; r < MR; ++r) {
      QVL_UNROLL_TILE
      for (int n = 0; n < 4; ++n) out[r][n] = vdupq_n_s32(0);
    }
    for (int qd = 0; qd < quads; qd += 4) {
      int8x16_t av[MR];
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) av[r] = vld1q_s8(a + r * lda + 4 * qd);
      // The lane of sdot by element is a constant: one step per quad of the registers.
      [&]<int... T>(std::integer_sequence<int, T...>) {
        (
            [&] {
              const int8_t* bq = b + (qd + T) * bstride;
              int8x16_t bv[4];
              QVL_UNROLL_TILE
              for (int n = 0; n < 4; ++n) bv[n] = vld1q_s8(bq + 16 * n);
              QVL_UNROLL_TILE
              for (int r = 0; r < MR; ++r) {
                QVL_UNROLL_TILE
                for (int n = 0; n < 4; ++n) out[r][n] = vdotq_laneq_s32(out[r][n], bv[n], av[r], T);
              }
            }(),
            ...);
      }
      (std::make_integer_sequence<int, 4>());
    }
  }

  static void Sums(const int8_t* b, int64_t bstride, int quads, int32x4_t (&sum)[4]) {
    const int8x16_t ones = vdupq_n_s8(1);
    QVL_UNROLL_TILE
    for (int n = 0; n < 4; ++n) sum[n] = vdupq_n_s32(0);
    for (int qd = 0; qd < quads; ++qd) {
      QVL_UNROLL_TILE
      for (int n = 0; n < 4; ++n)
        sum[n] = vdotq_s32(sum[n], vld1q_s8(b + qd * bstride + 16 * n), ones);
    }
  }
};

}  // namespace

Int8AttentionKernels NeonDotProdInt8AttentionKernels() {
  const Int8AttentionKernels base = NeonInt8AttentionKernels();
  return {neon_int8::QkI8<SdotProducts>, base.softmax, neon_int8::PvI8<SdotProducts>,
          base.quantize_rotated, base.quantize_values};
}

}  // namespace qvl::kernels
