// The NEON tier of the vector layer (ARMv8.0 Advanced SIMD, any 64-bit ARM): Simd<Neon>,
// 8 float lanes as a pair of float32x4_t, and this tier's own helpers. A pair rather than
// one register: the shared templates keep one accumulator per vector, and two independent
// fmla chains per step keep ARM's 2-4 FP pipes busy where one would wait on its latency;
// their 4 x 2 matmul tile then takes 16 of the 32 registers. Tails load and store lane
// by lane.
#pragma once

#include <arm_neon.h>

#include <cstdint>

#include "ops/simd.h"

namespace qvl::kernels {
namespace {

namespace neon {

// All-ones in lanes 0 .. n-1 of 4 (n may be <= 0 or >= 4).
inline uint32x4_t FirstLanes(int64_t n) {
  const int32x4_t idx = {0, 1, 2, 3};
  const int32_t c = static_cast<int32_t>(n < 0 ? 0 : n > 4 ? 4 : n);
  return vcltq_s32(idx, vdupq_n_s32(c));
}

// The first n (< 4) floats at p, zeros after; lane by lane, as NEON has no masked load
// (a copy through memory would call memcpy, and the call spills every live register).
inline float32x4_t LoadPartial(const float* p, int64_t n) {
  float32x4_t v = vdupq_n_f32(0.0f);
  if (n > 0) v = vld1q_lane_f32(p, v, 0);
  if (n > 1) v = vld1q_lane_f32(p + 1, v, 1);
  if (n > 2) v = vld1q_lane_f32(p + 2, v, 2);
  return v;
}

inline void StorePartial(float* p, int64_t n, float32x4_t v) {
  if (n > 0) vst1q_lane_f32(p, v, 0);
  if (n > 1) vst1q_lane_f32(p + 1, v, 1);
  if (n > 2) vst1q_lane_f32(p + 2, v, 2);
}

// The first n (< 8) 16-bit values at p, zeros after.
inline uint16x8_t LoadPartial(const uint16_t* p, int64_t n) {
  uint16x8_t v = vdupq_n_u16(0);
  if (n > 0) v = vld1q_lane_u16(p, v, 0);
  if (n > 1) v = vld1q_lane_u16(p + 1, v, 1);
  if (n > 2) v = vld1q_lane_u16(p + 2, v, 2);
  if (n > 3) v = vld1q_lane_u16(p + 3, v, 3);
  if (n > 4) v = vld1q_lane_u16(p + 4, v, 4);
  if (n > 5) v = vld1q_lane_u16(p + 5, v, 5);
  if (n > 6) v = vld1q_lane_u16(p + 6, v, 6);
  return v;
}

inline void StorePartial(uint16_t* p, int64_t n, uint16x8_t v) {
  if (n > 0) vst1q_lane_u16(p, v, 0);
  if (n > 1) vst1q_lane_u16(p + 1, v, 1);
  if (n > 2) vst1q_lane_u16(p + 2, v, 2);
  if (n > 3) vst1q_lane_u16(p + 3, v, 3);
  if (n > 4) vst1q_lane_u16(p + 4, v, 4);
  if (n > 5) vst1q_lane_u16(p + 5, v, 5);
  if (n > 6) vst1q_lane_u16(p + 6, v, 6);
}

// 8 bf16 values (4 32-bit pairs) as f32: the even (low) and the odd (high) halves.
inline float32x4_t EvenHalves(uint32x4_t x) { return vreinterpretq_f32_u32(vshlq_n_u32(x, 16)); }
inline float32x4_t OddHalves(uint32x4_t x) {
  return vreinterpretq_f32_u32(vandq_u32(x, vdupq_n_u32(0xffff0000u)));
}

// 4 bf16 values widened to f32 (exact).
inline float32x4_t WidenBf16(uint16x4_t h) { return vreinterpretq_f32_u32(vshll_n_u16(h, 16)); }

// f32 -> bf16 rounding to nearest even, finite inputs (as the other tiers round p).
inline uint16x4_t RoundToBf16(float32x4_t v) {
  const uint32x4_t bits = vreinterpretq_u32_f32(v);
  const uint32x4_t lsb = vandq_u32(vshrq_n_u32(bits, 16), vdupq_n_u32(1));
  return vshrn_n_u32(vaddq_u32(bits, vaddq_u32(lsb, vdupq_n_u32(0x7fff))), 16);
}

// Lanes of a where a < b, else b: x86's minps, so a NaN in a yields b as the scalar twins'
// compares do (vminq_f32 would return the NaN).
inline float32x4_t MinOrSecond(float32x4_t a, float32x4_t b) {
  return vbslq_f32(vcltq_f32(a, b), a, b);
}
inline float32x4_t MaxOrSecond(float32x4_t a, float32x4_t b) {
  return vbslq_f32(vcgtq_f32(a, b), a, b);
}

// p * 2^n for integral n in [-126, 128] (128 gives inf), from the exponent bits.
inline float32x4_t Scale2(float32x4_t p, float32x4_t n) {
  const int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
  return vmulq_f32(p, vreinterpretq_f32_s32(e));
}

}  // namespace neon

struct Neon {};

template <>
struct Simd<Neon> {
  struct V {
    float32x4_t lo, hi;
  };
  static constexpr int kLanes = 8;
  // Scale2 builds 2^n from exponent bits, normal floats only: exp saturates early.
  static constexpr float kExpLow = -87.3f, kExpHigh = 88.7f, kExp2Low = -126.0f;

  static V Zero() { return Set(0.0f); }
  static V Set(float f) { return {vdupq_n_f32(f), vdupq_n_f32(f)}; }
  static V Load(const float* p) { return {vld1q_f32(p), vld1q_f32(p + 4)}; }
  // The first min(left, 8) lanes of p, zeros after.
  static V Load(const float* p, int64_t left) {
    if (left >= 8) return Load(p);
    if (left >= 4) return {vld1q_f32(p), neon::LoadPartial(p + 4, left - 4)};
    return {neon::LoadPartial(p, left), vdupq_n_f32(0.0f)};
  }
  // bf16 values widened to f32 (exact), the first min(left, 8), zeros after.
  static V LoadBf16(const uint16_t* p, int64_t left) {
    const uint16x8_t h = left >= 8 ? vld1q_u16(p) : neon::LoadPartial(p, left);
    return {vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16)),
            vreinterpretq_f32_u32(vshll_high_n_u16(h, 16))};
  }
  static void Store(float* p, int64_t left, V v) {
    if (left >= 8) {
      vst1q_f32(p, v.lo);
      vst1q_f32(p + 4, v.hi);
    } else if (left >= 4) {
      vst1q_f32(p, v.lo);
      neon::StorePartial(p + 4, left - 4, v.hi);
    } else {
      neon::StorePartial(p, left, v.lo);
    }
  }
  // v with lanes from `left` on set to zero.
  static V KeepFirst(V v, int64_t left) {
    return {
        vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v.lo), neon::FirstLanes(left))),
        vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v.hi), neon::FirstLanes(left - 4)))};
  }
  static V Add(V a, V b) { return {vaddq_f32(a.lo, b.lo), vaddq_f32(a.hi, b.hi)}; }
  static V Sub(V a, V b) { return {vsubq_f32(a.lo, b.lo), vsubq_f32(a.hi, b.hi)}; }
  static V Mul(V a, V b) { return {vmulq_f32(a.lo, b.lo), vmulq_f32(a.hi, b.hi)}; }
  static V Div(V a, V b) { return {vdivq_f32(a.lo, b.lo), vdivq_f32(a.hi, b.hi)}; }
  // a * b + c
  static V MulAdd(V a, V b, V c) {
    return {vfmaq_f32(c.lo, a.lo, b.lo), vfmaq_f32(c.hi, a.hi, b.hi)};
  }
  // a * b - c, one rounding (negating c is exact)
  static V MulSub(V a, V b, V c) {
    return {vfmaq_f32(vnegq_f32(c.lo), a.lo, b.lo), vfmaq_f32(vnegq_f32(c.hi), a.hi, b.hi)};
  }
  // c - a * b
  static V NegMulAdd(V a, V b, V c) {
    return {vfmsq_f32(c.lo, a.lo, b.lo), vfmsq_f32(c.hi, a.hi, b.hi)};
  }
  static V Min(V a, V b) { return {neon::MinOrSecond(a.lo, b.lo), neon::MinOrSecond(a.hi, b.hi)}; }
  static V Max(V a, V b) { return {neon::MaxOrSecond(a.lo, b.lo), neon::MaxOrSecond(a.hi, b.hi)}; }
  static V Abs(V a) { return {vabsq_f32(a.lo), vabsq_f32(a.hi)}; }
  // Ties to even, as x86's round-to-nearest mode.
  static V Round(V a) { return {vrndnq_f32(a.lo), vrndnq_f32(a.hi)}; }
  static V Scale2(V p, V n) { return {neon::Scale2(p.lo, n.lo), neon::Scale2(p.hi, n.hi)}; }
  // Lanes of `negative` where v < 0, of `other` elsewhere.
  static V IfNegative(V v, V negative, V other) {
    return {vbslq_f32(vcltzq_f32(v.lo), negative.lo, other.lo),
            vbslq_f32(vcltzq_f32(v.hi), negative.hi, other.hi)};
  }
  static float ReduceAdd(V v) { return vaddvq_f32(vaddq_f32(v.lo, v.hi)); }
};

}  // namespace
}  // namespace qvl::kernels
