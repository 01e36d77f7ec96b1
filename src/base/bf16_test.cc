#include "base/bf16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace qvl {
namespace {

TEST(Bf16, RoundTripsEveryBf16Value) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = Bf16ToF32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(F32ToBf16(f), h);
  }
}

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(F32ToBf16(1.0f), 0x3f80);
  // 1 + 2^-8 is exactly between 1 and 1 + 2^-7: ties to the even mantissa (1.0).
  EXPECT_EQ(F32ToBf16(1.00390625f), 0x3f80);
  // 1 + 3*2^-8 is between 1 + 2^-7 and 1 + 2^-6: ties to even (1 + 2^-6).
  EXPECT_EQ(F32ToBf16(1.01171875f), 0x3f82);
  EXPECT_TRUE(std::isnan(Bf16ToF32(F32ToBf16(std::numeric_limits<float>::quiet_NaN()))));
}

// Each code against its definition: (-1)^s * 2^(e-7) * (1 + m/8), subnormals
// (-1)^s * 2^-6 * m/8, and the two NaN codes.
TEST(F8E4M3, DecodesEveryCodeAsItsDefinitionSays) {
  for (int v = 0; v < 256; ++v) {
    const int s = v >> 7, e = (v >> 3) & 15, m = v & 7;
    const float f = F8E4M3ToF32(static_cast<uint8_t>(v));
    if (e == 15 && m == 7) {
      EXPECT_TRUE(std::isnan(f)) << v;
      continue;
    }
    const double mag = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
    EXPECT_EQ(f, static_cast<float>(s ? -mag : mag)) << v;
    EXPECT_EQ(std::signbit(f), s == 1) << v;
  }
  EXPECT_EQ(F8E4M3ToF32(0x38), 1.0f);
  EXPECT_EQ(F8E4M3ToF32(0x7e), 448.0f);
  EXPECT_EQ(F8E4M3ToF32(0xfe), -448.0f);
  EXPECT_EQ(F8E4M3ToF32(0x01), 0x1p-9f);
  EXPECT_EQ(F8E4M3ToF32(0x08), 0x1p-6f);
}

TEST(F8E4M3, EncodesToTheNearestCodeTiesToEven) {
  for (int v = 0; v < 256; ++v) {
    if ((v & 0x7f) == 0x7f) continue;
    EXPECT_EQ(F32ToF8E4M3(F8E4M3ToF32(static_cast<uint8_t>(v))), v) << v;
  }
  // Between each pair of neighbouring positive codes: just below, at and just above the
  // midpoint.
  for (int v = 0; v < 0x7e; ++v) {
    const float lo = F8E4M3ToF32(static_cast<uint8_t>(v));
    const float hi = F8E4M3ToF32(static_cast<uint8_t>(v + 1));
    const float mid = (lo + hi) / 2;
    EXPECT_EQ(F32ToF8E4M3(std::nextafter(mid, lo)), v) << v;
    EXPECT_EQ(F32ToF8E4M3(std::nextafter(mid, hi)), v + 1) << v;
    EXPECT_EQ(F32ToF8E4M3(mid), (v & 1) ? v + 1 : v) << v;
    EXPECT_EQ(F32ToF8E4M3(-mid), 0x80 | ((v & 1) ? v + 1 : v)) << v;
  }
  EXPECT_EQ(F32ToF8E4M3(460.0f), 0x7e);
  EXPECT_EQ(F32ToF8E4M3(-1e9f), 0xfe);
  EXPECT_EQ(F32ToF8E4M3(1e-9f), 0x00);
  EXPECT_EQ(F32ToF8E4M3(std::numeric_limits<float>::quiet_NaN()) & 0x7f, 0x7f);
}

TEST(F16, RoundTripsEveryFiniteHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = F16ToF32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(F32ToF16(f), h) << std::hex << h;
  }
}

TEST(F16, KnownValues) {
  EXPECT_EQ(F16ToF32(0x3c00), 1.0f);
  EXPECT_EQ(F16ToF32(0xc000), -2.0f);
  EXPECT_EQ(F16ToF32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(F32ToF16(65504.0f), 0x7bff);
  EXPECT_EQ(F32ToF16(1e6f), 0x7c00);
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -26)), 0x0000);
}

// The fast rounding against its exact twin over a spread of every float's bit patterns,
// and every pattern around the halves' subnormal and overflow edges.
TEST(F16, RoundToF16IsTheRoundTrip) {
  const auto check = [](uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, 4);
    const float want = F16ToF32(F32ToF16(f));
    const float got = RoundToF16(f);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << bits;
    } else {
      EXPECT_EQ(std::memcmp(&got, &want, 4), 0) << std::hex << bits;
    }
  };
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4093) check(static_cast<uint32_t>(bits));
  for (uint32_t edge : {0x38800000u, 0x477ff000u, 0x7f800000u}) {
    for (uint32_t d = 0; d < 0x4000; ++d) {
      for (uint32_t sign : {0u, 0x80000000u}) {
        check(sign | (edge - d));
        check(sign | (edge + d));
      }
    }
  }
}

}  // namespace
}  // namespace qvl
