// The AVX2 + FMA tier of the vector layer (include only from files built with the AVX2
// flags): Simd<Avx2> (__m256), 8 float lanes with masked tails, and this tier's own helpers.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "ops/simd.h"

namespace qvl::kernels {
namespace {

namespace avx2 {

// Lane mask (all-ones lanes) for the first n of 8 lanes, for maskload/maskstore.
inline __m256i FirstLanes(int n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
}

// The first `cols` (a multiple of 16) unsigned bytes of `rows` rows `ld` apart, as int16
// rows `ld_out` apart: the operand the vpmaddwd int8 attention kernels broadcast.
inline void WidenBytes(const uint8_t* x, int64_t ld, int rows, int cols, int16_t* out, int ld_out) {
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; c += 16) {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + r * ld + c));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r * ld_out + c),
                          _mm256_cvtepu8_epi16(b));
    }
  }
}

// Even (low) and odd (high) bf16 halves of 8 32-bit lanes, as f32.
inline __m256 EvenHalves(__m256i x) { return _mm256_castsi256_ps(_mm256_slli_epi32(x, 16)); }
inline __m256 OddHalves(__m256i x) {
  return _mm256_castsi256_ps(_mm256_and_si256(x, _mm256_set1_epi32(static_cast<int>(0xffff0000u))));
}

// f32 -> bf16 with round-to-nearest-even (finite inputs), as F32ToBf16 and
// avx512::RoundToBf16.
inline __m128i RoundToBf16(__m256 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(
      _mm256_add_epi32(bits, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
  return _mm_packus_epi32(_mm256_castsi256_si128(rounded), _mm256_extracti128_si256(rounded, 1));
}

// One stage h = 1, 2 or 4 of the unnormalized Walsh-Hadamard transform on 8 lanes (see
// ops/hadamard.h): lanes with bit h clear get x[j] + x[j + h], the others x[j - h] - x[j],
// the same additions as the scalar loops, so every tier rotates to the same bits.
template <int kH>
inline __m256 Butterfly(__m256 x) {
  __m256 swapped;
  if constexpr (kH == 1) swapped = _mm256_permute_ps(x, 0xB1);
  if constexpr (kH == 2) swapped = _mm256_permute_ps(x, 0x4E);
  if constexpr (kH == 4) swapped = _mm256_permute2f128_ps(x, x, 0x01);
  constexpr int kUpper = kH == 1 ? 0xAA : kH == 2 ? 0xCC : 0xF0;
  return _mm256_blend_ps(_mm256_add_ps(x, swapped), _mm256_sub_ps(swapped, x), kUpper);
}

// Stages 1, 2 and 4 of each 8 lanes.
inline __m256 Hadamard8(__m256 x) { return Butterfly<4>(Butterfly<2>(Butterfly<1>(x))); }

inline float MaxOf(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

inline int32_t SumOf(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

// acc += u . s per 32-bit lane (u unsigned and s signed bytes): AVX-VNNI's VEX-encoded
// vpdpbusd, for the avxvnni tier's files only. In inline asm, as avx512::DotBytes: around
// the intrinsic GCC 12 moves tile sums between registers and the stack; and unlike the
// intrinsic, asm compiles in the AVX2 files that include this header without -mavxvnni.
inline void DotBytesVnni(__m256i& acc, __m256i u, __m256i s) {
  asm("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(u), "x"(s));
}

}  // namespace avx2

struct Avx2 {};

template <>
struct Simd<Avx2> {
  using V = __m256;
  static constexpr int kLanes = 8;
  // Scale2 builds 2^n from exponent bits, normal floats only: exp saturates early.
  static constexpr float kExpLow = -87.3f, kExpHigh = 88.7f, kExp2Low = -126.0f;

  static V Zero() { return _mm256_setzero_ps(); }
  static V Set(float f) { return _mm256_set1_ps(f); }
  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  // The first min(left, 8) lanes of p, zeros after.
  static V Load(const float* p, int64_t left) {
    if (left >= 8) return _mm256_loadu_ps(p);
    return _mm256_maskload_ps(p, avx2::FirstLanes(static_cast<int>(left)));
  }
  // bf16 values widened to f32 (exact), the first min(left, 8), zeros after.
  static V LoadBf16(const uint16_t* p, int64_t left) {
    __m128i h;
    if (left >= 8) {
      h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    } else {
      alignas(16) uint16_t tail[8] = {};
      for (int64_t i = 0; i < left; ++i) tail[i] = p[i];
      h = _mm_load_si128(reinterpret_cast<const __m128i*>(tail));
    }
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static void Store(float* p, int64_t left, V v) {
    if (left >= 8) {
      _mm256_storeu_ps(p, v);
    } else {
      _mm256_maskstore_ps(p, avx2::FirstLanes(static_cast<int>(left)), v);
    }
  }
  // v with lanes from `left` on set to zero.
  static V KeepFirst(V v, int64_t left) {
    return _mm256_and_ps(
        v, _mm256_castsi256_ps(avx2::FirstLanes(static_cast<int>(left < 8 ? left : 8))));
  }
  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm256_div_ps(a, b); }
  static V MulAdd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }      // a * b + c
  static V MulSub(V a, V b, V c) { return _mm256_fmsub_ps(a, b, c); }      // a * b - c
  static V NegMulAdd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }  // c - a * b
  static V Min(V a, V b) { return _mm256_min_ps(a, b); }
  static V Max(V a, V b) { return _mm256_max_ps(a, b); }
  static V Abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static V Round(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // p * 2^n for integral n in [-126, 128] (128 gives inf).
  static V Scale2(V p, V n) {
    const __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  }
  // Lanes of `negative` where v < 0, of `other` elsewhere.
  static V IfNegative(V v, V negative, V other) {
    return _mm256_blendv_ps(other, negative, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
  }
  static float ReduceAdd(V v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
  }
};

}  // namespace
}  // namespace qvl::kernels
