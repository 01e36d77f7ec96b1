// Dequantizing an int8 KV cache group to bf16 (KvI8GroupLayout) for the AVX-512 tiers,
// included by attention_avx512.cc (rounding by integer math) and attention_avx512bf16.cc
// (vcvtneps2bf16, which flushes denormals: the cache stores a block that would give one
// as zeros, so both round the same). In an anonymous namespace so each tier file keeps
// its own copy, compiled for its flags.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "ops/attention_kernels.h"

namespace qvl::kernels {
namespace {

// 16 codes times their scales, rounded to bf16 by `round` (__m512 -> __m256i of 16 bf16).
template <typename Round>
inline void DequantStore16(const int8_t* codes, __m512 scale, uint16_t* out, Round round) {
  const __m512 x = _mm512_cvtepi32_ps(
      _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes))));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), round(_mm512_mul_ps(x, scale)));
}

template <typename Round>
void DequantKvI8Avx512(const int8_t* codes, const float* scales, int d, bool values, uint16_t* out,
                       Round round) {
  if (values) {
    // A token pair's row: dim i of tokens 2p, 2p + 1 at 2i, 2i + 1; 8 dims per vector,
    // all in one block, so the scales are the pair's two, repeated.
    for (int p = 0; p < kKeyGroup / 2; ++p) {
      for (int i = 0; i < d; i += 8) {
        const float* pair = scales + i / kKvI8Block * kKeyGroup + 2 * p;
        const __m512 scale = _mm512_castpd_ps(
            _mm512_broadcastsd_pd(_mm_load_sd(reinterpret_cast<const double*>(pair))));
        const int64_t at = int64_t{p} * 2 * d + 2 * i;
        DequantStore16(codes + at, scale, out + at, round);
      }
    }
    return;
  }
  // A dim pair's row: 16 tokens, two dims each; tokens 0-7 in the first vector, 8-15 in
  // the second, each scale twice.
  const __m512i first = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
  const __m512i second = _mm512_add_epi32(first, _mm512_set1_epi32(8));
  for (int b = 0; b < d / kKvI8Block; ++b) {
    const __m512 block = _mm512_loadu_ps(scales + b * kKeyGroup);
    const __m512 lo = _mm512_permutexvar_ps(first, block);
    const __m512 hi = _mm512_permutexvar_ps(second, block);
    for (int r = b * kKvI8Block / 2; r < (b + 1) * kKvI8Block / 2; ++r) {
      const int64_t at = int64_t{r} * 2 * kKeyGroup;
      DequantStore16(codes + at, lo, out + at, round);
      DequantStore16(codes + at + 16, hi, out + at + 16, round);
    }
  }
}

}  // namespace
}  // namespace qvl::kernels
