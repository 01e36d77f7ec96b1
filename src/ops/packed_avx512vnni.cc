// Packed-format kernels for AVX512-VNNI: Q8, Q4 and W8A8 on vpdpbusd (the tiles of
// packed_avx512_int8.h), for the tiers with it (Cascade Lake and Ice Lake without
// AVX512-BF16; Zen 4 and Sapphire Rapids with). Built without the BF16 flags, so nothing
// here can need them.
#include <immintrin.h>

#include "ops/hadamard.h"
#include "ops/packed_avx512.h"
#include "ops/packed_avx512_int8.h"
#include "ops/packed_kernels.h"
#include "ops/simd_avx512.h"
#include "ops/weight_format.h"

namespace qvl::kernels {
namespace {

// The unsigned weight codes (value + 128) times the signed x codes; the x rows'
// correction (-128 * sum of their codes) starts each sum.
struct VnniProducts {
  static constexpr const uint8_t* kQ4Table = kQ4Codes;
  static __m512i Start(int32_t corr) { return _mm512_set1_epi32(corr); }
  static __m512i Weights(__m512i codes) { return codes; }
  static void Dot(__m512i& acc, __m512i w, __m512i x) { avx512::DotBytes(acc, w, x); }
};

void QuantizeRowsW8A8(const float* x, int64_t ldx, int64_t m, int64_t k, const RowCodes& out) {
  const int64_t block = W8A8RotationBlock(out.kp);
  const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  QuantizeRowsW8A8With(
      x, ldx, m, out,
      [&](const float* xi, float* rotated) {
        // Stages 1 to 32 on 64 values in registers (blocks are at least 64), the rest in
        // passes over the row.
        for (int64_t c = 0; c < out.kp; c += 64) {
          __m512 v[4];
          for (int j = 0; j < 4; ++j) {
            v[j] = avx512::Hadamard16(
                _mm512_maskz_loadu_ps(ColumnMask(k - c - 16 * j), xi + c + 16 * j));
          }
          const __m512 a0 = _mm512_add_ps(v[0], v[1]), a1 = _mm512_sub_ps(v[0], v[1]);
          const __m512 a2 = _mm512_add_ps(v[2], v[3]), a3 = _mm512_sub_ps(v[2], v[3]);
          _mm512_storeu_ps(rotated + c, _mm512_add_ps(a0, a2));
          _mm512_storeu_ps(rotated + c + 16, _mm512_add_ps(a1, a3));
          _mm512_storeu_ps(rotated + c + 32, _mm512_sub_ps(a0, a2));
          _mm512_storeu_ps(rotated + c + 48, _mm512_sub_ps(a1, a3));
        }
        HadamardStagesFrom(rotated, out.kp, block, 64);
        __m512 amax = _mm512_setzero_ps();
        // |x| first: vmaxps returns its second operand when one is NaN.
        for (int64_t c = 0; c < out.kp; c += 16) {
          amax = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(rotated + c)), amax);
        }
        return _mm512_reduce_max_ps(amax);
      },
      [&](const float* rotated, float inv_scale, int8_t* q) {
        const __m512 inv = _mm512_set1_ps(inv_scale);
        __m512i sum = _mm512_setzero_si512();
        for (int64_t c = 0; c < out.kp; c += 16) {
          const __m512 v = _mm512_mul_ps(_mm512_loadu_ps(rotated + c), inv);
          const __m512i qi = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(v, lo), hi));
          sum = _mm512_add_epi32(sum, qi);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(q + c), _mm512_cvtepi32_epi8(qi));
        }
        return _mm512_reduce_add_epi32(sum);
      });
}

}  // namespace

PackedKernels Avx512VnniPackedKernels() {
  PackedKernels k = Avx512PackedKernels();  // bf16: widened to f32 where vdpbf16ps is missing
  k.q8 = PackedQ8<VnniProducts>;
  k.q4 = PackedQ4<VnniProducts>;
  k.quant_rows = kQuantRows;
  k.w8a8 = PackedW8A8<VnniProducts>;
  k.quantize_w8a8 = QuantizeRowsW8A8;
  k.w8a8_rows = kStreamRows;
  return k;
}

}  // namespace qvl::kernels
