// Packed-format kernels for AVX-VNNI: Q8, Q4 and W8A8 on the VEX-encoded 256-bit
// vpdpbusd, for CPUs with AVX2 and AVX-VNNI but no AVX-512 (Intel cores from Alder Lake
// on, the N100-class Atoms, Sierra Forest Xeons). One vpdpbusd does the 32 products AVX2
// spends vpsignb + vpmaddubsw + vpmaddwd + vpaddd on. The tiles are packed_avx2.h's;
// bf16 and the activation quantizers are AVX2's. Built with the AVX2 flags and
// -mavxvnni only.
#include <immintrin.h>

#include "ops/packed_avx2.h"
#include "ops/packed_kernels.h"
#include "ops/simd_avx2.h"
#include "ops/weight_format.h"

namespace qvl::kernels {
namespace {

// The unsigned weight codes (value + 128) times the signed x codes; the x rows'
// correction (-128 * sum of their codes) starts each sum.
struct VnniProducts {
  static constexpr const uint8_t* kQ4Table = kQ4Codes;
  static __m256i Start(int32_t corr) { return _mm256_set1_epi32(corr); }
  static __m256i Weights(__m256i codes) { return codes; }
  static void Dot(__m256i& acc, __m256i w, __m256i x) { avx2::DotBytesVnni(acc, w, x); }
};

}  // namespace

PackedKernels AvxVnniPackedKernels() {
  PackedKernels k = Avx2PackedKernels();
  k.q8 = PackedQuant<VnniProducts, false>;
  k.q4 = PackedQuant<VnniProducts, true>;
  k.w8a8 = PackedW8A8<VnniProducts>;
  return k;
}

}  // namespace qvl::kernels
