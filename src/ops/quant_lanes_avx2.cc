// Q8 and Q4 packing on AVX2: a panel's 16 rows in two passes of 8 lanes (see
// ops/quant_lanes.h). Built with -ffp-contract=off.
#include <immintrin.h>

#include "ops/quant_lanes.h"
#include "ops/simd_avx2.h"

namespace qvl::pack {
namespace {

struct Avx2Lanes : kernels::Simd<kernels::Avx2> {
  using F = V;
  using M = __m256;  // all-ones lanes
  static void Store(float* p, F v) { _mm256_store_ps(p, v); }
  static M Greater(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static M Less(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M LessEqual(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
  static M And(M a, M b) { return _mm256_and_ps(a, b); }
  static M Or(M a, M b) { return _mm256_or_ps(a, b); }
  static M Not(M a) { return _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(-1))); }
  static F Select(M m, F yes, F no) { return _mm256_blendv_ps(no, yes, m); }
  static void Grid(F v, int32_t* p) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm256_add_epi32(_mm256_cvtps_epi32(v), _mm256_set1_epi32(128)));
  }
  static F LevelValues(const int32_t* p) {
    return _mm256_i32gather_ps(kNearestValue.data(),
                               _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), 4);
  }
  static F RoundToHalf(F v) {
    return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  static void StoreHalves(uint16_t* p, F v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
};

}  // namespace

PanelBlockQuantizers Avx2PanelBlockQuantizers() { return LanePanelBlockQuantizers<Avx2Lanes>(); }

}  // namespace qvl::pack
