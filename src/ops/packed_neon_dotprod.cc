// Packed-format kernels for ARMv8.2 with the dot-product extension (Cortex-A55/A76 on,
// Raspberry Pi 5, Neoverse N1/V1/V2: Graviton 2 to 4, Ampere Altra; Apple M1 on): Q8,
// Q4 and W8A8 on sdot, which does the 16 products four smull + sadalp pairs take. The
// tiles are packed_neon.h's; bf16 and the activation quantizers are NeonPackedKernels'.
// Built with -march=armv8.2-a+dotprod and chosen only where the CPU reports dotprod.
#include <arm_neon.h>

#include "ops/packed_kernels.h"
#include "ops/packed_neon.h"

namespace qvl::kernels {
namespace {

// sdot by element: each output's 4 weight bytes times the 4 x codes of one lane, signed
// by signed, added to its int32 sum.
struct DotProducts {
  using Acc = int32x4_t;
  // A 4-row Q8 / Q4 tile holds 16 float sums, 8 x vectors and 4 integer sums: with the
  // weights, scales and factors that fills the 32 registers.
  static constexpr int kQuantRows = 4;
  static constexpr int kW8A8Rows = 4;
  static Acc Zero() { return vdupq_n_s32(0); }
  template <int kLane>
  static void Dot(Acc& acc, int8x16_t w, int8x16_t x) {
    acc = vdotq_laneq_s32(acc, w, x, kLane);
  }
  static int32x4_t Sum(Acc acc) { return acc; }
};

}  // namespace

PackedKernels NeonDotProdPackedKernels() {
  PackedKernels k = NeonPackedKernels();
  k.q8 = PackedQuant<DotProducts, false>;
  k.q4 = PackedQuant<DotProducts, true>;
  k.quant_rows = DotProducts::kQuantRows;
  k.w8a8 = PackedW8A8<DotProducts>;
  k.w8a8_rows = DotProducts::kW8A8Rows;
  return k;
}

}  // namespace qvl::kernels
