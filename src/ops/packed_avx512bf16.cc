// Packed bf16 kernel for AVX512-BF16 (Zen 4, Sapphire Rapids): vdpbf16ps on bf16 pairs.
// The tier's int8 formats run the AVX512-VNNI kernels (packed_avx512vnni.cc).
#include <immintrin.h>

#include <cstdint>

#include "ops/packed_avx512.h"
#include "ops/packed_kernels.h"
#include "ops/packed_tiles.h"

namespace qvl::kernels {
namespace {

// vdpbf16ps: both products of a pair in one instruction, in the same order (denormals
// flushed). 6 x 4 accumulators and 4 weight vectors of 32 registers.
struct DotPairs {
  static constexpr int kRows = 6, kPanels = 4;
  using X = __m512i;
  static X LoadX(int32_t pair) { return _mm512_set1_epi32(pair); }
  static __m512 Add(__m512 acc, X x, __m512i w) {
    return _mm512_dpbf16_ps(acc, (__m512bh)x, (__m512bh)w);
  }
};

}  // namespace

PackedKernels Avx512Bf16PackedKernels() {
  PackedKernels k = Avx512VnniPackedKernels();
  k.bf16 = PackedBf16<DotPairs>;
  k.bf16_rows = DotPairs::kRows;
  return k;
}

}  // namespace qvl::kernels
