// The AVX-512 tier of the vector layer (include only from files built with the AVX-512
// flags): Simd<Avx512> (__m512), 16 float lanes with masked tails, and this tier's own helpers.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "ops/simd.h"

namespace qvl::kernels {
namespace {

namespace avx512 {

// Even (low) and odd (high) bf16 halves of 16 32-bit lanes, as f32.
inline __m512 EvenHalves(__m512i x) { return _mm512_castsi512_ps(_mm512_slli_epi32(x, 16)); }
inline __m512 OddHalves(__m512i x) {
  return _mm512_castsi512_ps(_mm512_and_si512(x, _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
}

// Masks for the first n of 16 lanes.
inline __mmask16 FirstLanes(int n) {
  return n >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n > 0 ? n : 0)) - 1);
}

// The 4 bytes at p in every 32-bit lane: the broadcast operand of vpdpbusd (4 int8) and
// vdpbf16ps (2 bf16).
inline __m512i Broadcast4Bytes(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// acc += u . s per 32-bit lane (vpdpbusd, u unsigned and s signed bytes), for the tiers
// with AVX512-VNNI. In inline asm: around the intrinsic GCC 12 copies tile accumulators
// between registers and the stack on every step (12 % of the int8 attention time; most of
// a W8A8 tile's).
inline void DotBytes(__m512i& acc, __m512i u, __m512i s) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u), "v"(s));
}

// f32 -> bf16 with round-to-nearest-even (finite inputs), as F32ToBf16.
inline __m256i RoundToBf16(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded, 16));
}

// One butterfly stage of the Walsh-Hadamard transform on the 16 lanes: lanes with bit h
// clear get x[j] + x[j + h], the others x[j - h] - x[j], as the scalar twins compute them.
template <int kH>
inline __m512 Butterfly(__m512 x) {
  __m512 swapped;
  if constexpr (kH == 1) swapped = _mm512_permute_ps(x, 0xB1);
  if constexpr (kH == 2) swapped = _mm512_permute_ps(x, 0x4E);
  if constexpr (kH == 4) swapped = _mm512_shuffle_f32x4(x, x, 0xB1);
  if constexpr (kH == 8) swapped = _mm512_shuffle_f32x4(x, x, 0x4E);
  constexpr __mmask16 kUpper = kH == 1 ? 0xAAAA : kH == 2 ? 0xCCCC : kH == 4 ? 0xF0F0 : 0xFF00;
  return _mm512_mask_sub_ps(_mm512_add_ps(x, swapped), kUpper, swapped, x);
}

// The transform's stages h = 1, 2, 4, 8 on each 16-lane vector.
inline __m512 Hadamard16(__m512 x) {
  return Butterfly<8>(Butterfly<4>(Butterfly<2>(Butterfly<1>(x))));
}

// Lane j of the result is op over the 16 lanes of v[j] (op associative and commutative
// where it is exact: integer sums, max), in 15 ops and 30 shuffles for 16 reductions
// where one _mm512_reduce_* is 4 of each. Ints go through as float bit patterns.
template <typename Op>
inline __m512 ReduceEach16(const __m512 (&v)[16], const Op& op) {
  __m512 c[8], e[4], g[2];
  // Halves: c[i] holds v[2i]'s partials in lanes 0-7 and v[2i + 1]'s in lanes 8-15.
  for (int i = 0; i < 8; ++i) {
    c[i] = op(_mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0x44),
              _mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], 0xEE));
  }
  // Quarters: quarter q of e[i] holds v[4i + q]'s 4 partials.
  for (int i = 0; i < 4; ++i) {
    e[i] = op(_mm512_shuffle_f32x4(c[2 * i], c[2 * i + 1], 0x88),
              _mm512_shuffle_f32x4(c[2 * i], c[2 * i + 1], 0xDD));
  }
  // Pairs: lanes 0-1 of quarter q of g[i] hold v[8i + q]'s, lanes 2-3 v[8i + 4 + q]'s.
  for (int i = 0; i < 2; ++i) {
    g[i] = op(_mm512_shuffle_ps(e[2 * i], e[2 * i + 1], 0x44),
              _mm512_shuffle_ps(e[2 * i], e[2 * i + 1], 0xEE));
  }
  // Lane 4q + t holds all of v[4t + q]; one permute puts v[j] in lane j.
  const __m512 r = op(_mm512_shuffle_ps(g[0], g[1], 0x88), _mm512_shuffle_ps(g[0], g[1], 0xDD));
  return _mm512_permutexvar_ps(
      _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), r);
}

}  // namespace avx512

struct Avx512 {};

template <>
struct Simd<Avx512> {
  using V = __m512;
  static constexpr int kLanes = 16;
  // vscalefps reaches the subnormals, so exp saturates only where float does.
  static constexpr float kExpLow = -104.0f, kExpHigh = 88.8f, kExp2Low = -150.0f;

  static V Zero() { return _mm512_setzero_ps(); }
  static V Set(float f) { return _mm512_set1_ps(f); }
  static V Load(const float* p) { return _mm512_loadu_ps(p); }
  // The first min(left, 16) lanes of p, zeros after.
  static V Load(const float* p, int64_t left) { return _mm512_maskz_loadu_ps(Mask(left), p); }
  // bf16 values widened to f32 (exact), the first min(left, 16), zeros after.
  static V LoadBf16(const uint16_t* p, int64_t left) {
    const __m256i h = _mm256_maskz_loadu_epi16(Mask(left), p);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static void Store(float* p, int64_t left, V v) { _mm512_mask_storeu_ps(p, Mask(left), v); }
  // v with lanes from `left` on set to zero.
  static V KeepFirst(V v, int64_t left) { return _mm512_maskz_mov_ps(Mask(left), v); }
  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm512_div_ps(a, b); }
  static V MulAdd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }      // a * b + c
  static V MulSub(V a, V b, V c) { return _mm512_fmsub_ps(a, b, c); }      // a * b - c
  static V NegMulAdd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a * b
  static V Min(V a, V b) { return _mm512_min_ps(a, b); }
  static V Max(V a, V b) { return _mm512_max_ps(a, b); }
  static V Abs(V a) { return _mm512_abs_ps(a); }
  static V Round(V a) {
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // p * 2^n for integral n.
  static V Scale2(V p, V n) { return _mm512_scalef_ps(p, n); }
  // Lanes of `negative` where v < 0, of `other` elsewhere.
  static V IfNegative(V v, V negative, V other) {
    return _mm512_mask_mov_ps(other, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ),
                              negative);
  }
  static float ReduceAdd(V v) { return _mm512_reduce_add_ps(v); }

 private:
  static __mmask16 Mask(int64_t left) {
    return avx512::FirstLanes(static_cast<int>(left < 16 ? left : 16));
  }
};

}  // namespace
}  // namespace qvl::kernels
