// Packed bf16 kernel for the AVX-512 tiers without AVX512-BF16 (Skylake-X, Cascade Lake,
// Ice Lake): bf16 pairs widened to float (exact) and multiplied with 512-bit FMA, the
// AVX2 kernel's arithmetic on a whole 16-output panel per vector. Built with the AVX-512
// F/BW/VL/DQ flags only. The int8 formats are AVX2's on `avx512` and VNNI's on
// `avx512vnni` (packed_avx512vnni.cc).
#include <immintrin.h>

#include <cstdint>

#include "ops/packed_avx512.h"
#include "ops/packed_kernels.h"
#include "ops/packed_tiles.h"

namespace qvl::kernels {
namespace {

// bf16 pairs widened to float and multiplied with two vfmadd: acc = (acc + x1 * w1) +
// x0 * w0, as every tier rounds it. A tile of 4 x 4 accumulators, 2 widened x per row and
// 2 widened weights fills the 32 registers.
struct FmaPairs {
  static constexpr int kRows = 4, kPanels = 4;
  struct X {
    __m512 even, odd;
  };
  static __m512 Even(__m512i v) { return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)); }
  static __m512 Odd(__m512i v) {
    return _mm512_castsi512_ps(
        _mm512_and_si512(v, _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
  }
  static X LoadX(int32_t pair) {
    const __m512i v = _mm512_set1_epi32(pair);
    return {Even(v), Odd(v)};
  }
  static __m512 Add(__m512 acc, X x, __m512i w) {
    return _mm512_fmadd_ps(x.even, Even(w), _mm512_fmadd_ps(x.odd, Odd(w), acc));
  }
};

}  // namespace

PackedKernels Avx512PackedKernels() {
  PackedKernels k = Avx2PackedKernels();
  k.bf16 = PackedBf16<FmaPairs>;
  k.bf16_rows = FmaPairs::kRows;
  return k;
}

}  // namespace qvl::kernels
