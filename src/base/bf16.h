// bfloat16, IEEE half and float8 e4m3 conversions. bf16 -> f32 is exact; f32 -> bf16
// rounds to nearest even, as torch does.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace qvl {

inline float Bf16ToF32(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t F32ToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline float F16ToF32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t F32ToF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (abs < 0x38800000u) {  // subnormal or zero in half
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t e = abs >> 23;
    const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // half subnormal unit is 2^-24
    uint32_t r = m >> shift;
    const uint32_t rest = m & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = abs - 0x38000000u;  // rebias exponent 127 -> 15
  r += 0xfffu + ((r >> 13) & 1u);
  return static_cast<uint16_t>(sign | (r >> 13));
}

// F16ToF32(F32ToF16(f)): `f` rounded to the nearest half, kept as float. A first start
// rounds every weight of an F16-scaled checkpoint so (AutoAWQ's, GPTQ's); rounding the
// float's bits in place took the 2B GPTQ file's from 7.9 to 5.4 s (Zen 5).
inline float RoundToF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint32_t abs = bits & 0x7fffffffu;
  // A normal half or zero (a code on its zero point, as common as any other code): one
  // branch, which the rare rest (halves' subnormals, overflow, NaN) alone mispredicts.
  if ((abs - 0x38800000u < 0x477ff000u - 0x38800000u) | (abs == 0)) {
    bits += 0xfffu + ((bits >> 13) & 1u);
    bits &= 0xffffe000u;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  return F16ToF32(F32ToF16(f));
}

// float8 e4m3 as torch.float8_e4m3fn and safetensors' F8_E4M3 store it (the weights of
// fp8 checkpoints): exponent bias 7, no infinities, S.1111.111 is NaN, largest 448,
// subnormals m * 2^-9. Exact in f32.
inline float F8E4M3ToF32(uint8_t v) {
  const uint32_t sign = static_cast<uint32_t>(v & 0x80u) << 24;
  const uint32_t exp = (v >> 3) & 0xfu;
  const uint32_t mant = v & 0x7u;
  uint32_t bits;
  if (exp == 0) {
    float f = static_cast<float>(mant) * 0x1p-9f;
    std::memcpy(&bits, &f, 4);
    bits |= sign;
  } else if (exp == 0xf && mant == 0x7) {
    bits = sign | 0x7fc00000u;
  } else {
    bits = sign | ((exp + 127 - 7) << 23) | (mant << 20);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// The nearest e4m3 code to f, ties to even, as torch's cast rounds; magnitudes past 448
// saturate to 448, as transformers' Fp8Quantize clamps before it casts. NaN gives 0x7f.
inline uint8_t F32ToF8E4M3(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7f;
  if (abs >= 0x43e00000u) return sign | 0x7e;  // 448
  if (abs < 0x3c800000u) {                     // under 2^-6: subnormal steps of 2^-9
    float a;
    std::memcpy(&a, &abs, 4);
    return static_cast<uint8_t>(sign | static_cast<uint8_t>(std::nearbyint(a * 512.0f)));
  }
  const uint32_t rounded = (abs + 0x7ffffu + ((abs >> 20) & 1u)) >> 20;
  return static_cast<uint8_t>(sign | (rounded - ((127u - 7u) << 3)));
}

}  // namespace qvl
