// Q8 and Q4 packing on AVX-512: a panel's 16 rows in the 16 lanes (see
// ops/quant_lanes.h). Built with -ffp-contract=off.
#include <immintrin.h>

#include "ops/quant_lanes.h"
#include "ops/simd_avx512.h"

namespace qvl::pack {
namespace {

struct Avx512Lanes : kernels::Simd<kernels::Avx512> {
  using F = V;
  using M = __mmask16;
  static void Store(float* p, F v) { _mm512_store_ps(p, v); }
  static M Greater(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static M Less(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M LessEqual(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
  static M And(M a, M b) { return a & b; }
  static M Or(M a, M b) { return a | b; }
  static M Not(M a) { return static_cast<M>(~a); }
  static F Select(M m, F yes, F no) { return _mm512_mask_mov_ps(no, m, yes); }
  static void Grid(F v, int32_t* p) {
    _mm512_storeu_si512(p, _mm512_add_epi32(_mm512_cvtps_epi32(v), _mm512_set1_epi32(128)));
  }
  // Two 32-entry permutes and a compare instead of a gather (see Q4Buckets).
  static F LevelValues(const int32_t* p) {
    const __m512i grid = _mm512_loadu_si512(p);
    const __m512i bucket = _mm512_srli_epi32(grid, 3);
    const Q4Buckets& b = kQ4Buckets;
    const F lower = _mm512_permutex2var_ps(_mm512_loadu_ps(b.lower.data()), bucket,
                                           _mm512_loadu_ps(b.lower.data() + 16));
    const F upper = _mm512_permutex2var_ps(_mm512_loadu_ps(b.upper.data()), bucket,
                                           _mm512_loadu_ps(b.upper.data() + 16));
    const __m512i first =
        _mm512_permutex2var_epi32(_mm512_loadu_si512(b.first_upper.data()), bucket,
                                  _mm512_loadu_si512(b.first_upper.data() + 16));
    return _mm512_mask_mov_ps(lower, _mm512_cmpge_epi32_mask(grid, first), upper);
  }
  static F RoundToHalf(F v) {
    return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  static void StoreHalves(uint16_t* p, F v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
};

}  // namespace

PanelBlockQuantizers Avx512PanelBlockQuantizers() {
  return LanePanelBlockQuantizers<Avx512Lanes>();
}

}  // namespace qvl::pack
