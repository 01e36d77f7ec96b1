// The tables and constants of Q4 block quantization, shared by the scalar packer
// (quant_q4.cc) and its vector tiers (quant_lanes.h); internal to ops/.
#pragma once

#include <array>
#include <cstdint>

#include "ops/weight_format.h"

namespace qvl::pack {

// kNearestLevel[r + 128] is the index of the level nearest to the integer r (the lower
// one on a tie), and kNearestValue[r + 128] that level's value.
constexpr std::array<uint8_t, 256> MakeNearestLevel() {
  std::array<uint8_t, 256> table{};
  for (int r = -128; r < 128; ++r) {
    int best = 0;
    for (int j = 1; j < 16; ++j) {
      const int d = r - kQ4Levels[j], e = r - kQ4Levels[best];
      if (d * d < e * e) best = j;
    }
    table[r + 128] = static_cast<uint8_t>(best);
  }
  return table;
}
constexpr std::array<uint8_t, 256> kNearestLevel = MakeNearestLevel();
constexpr std::array<float, 256> MakeNearestValue() {
  std::array<float, 256> table{};
  for (int i = 0; i < 256; ++i) table[i] = kQ4Levels[kNearestLevel[i]];
  return table;
}
constexpr std::array<float, 256> kNearestValue = MakeNearestValue();
constexpr uint8_t kZeroLevel = 8;
static_assert(kQ4Levels[kZeroLevel] == 0);

// The same lookup in 32 buckets of 8 grid points, for vectors that permute 32 entries
// but cannot gather fast: levels lie at least 9 apart, so the nearest level changes at
// most once inside a bucket, at grid point `first_upper`.
struct Q4Buckets {
  std::array<float, 32> lower{}, upper{};  // the values before and from first_upper
  std::array<int32_t, 32> first_upper{};   // 8 * bucket + 8 where nothing changes
};
constexpr Q4Buckets MakeQ4Buckets() {
  Q4Buckets b;
  for (int k = 0; k < 32; ++k) {
    b.lower[k] = kNearestValue[8 * k];
    b.upper[k] = kNearestValue[8 * k + 7];
    b.first_upper[k] = 8 * k + 8;
    for (int g = 8 * k + 7; g >= 8 * k && kNearestValue[g] == b.upper[k]; --g) {
      b.first_upper[k] = g;
    }
  }
  return b;
}
constexpr Q4Buckets kQ4Buckets = MakeQ4Buckets();
constexpr bool BucketsMatchTable() {
  for (int g = 0; g < 256; ++g) {
    const int k = g / 8;
    const float v = g >= kQ4Buckets.first_upper[k] ? kQ4Buckets.upper[k] : kQ4Buckets.lower[k];
    if (v != kNearestValue[g]) return false;
  }
  return true;
}
static_assert(BucketsMatchTable());

// Scales tried per end of the table: the largest magnitude on the end level, then a little
// inside it (clipping the extreme for a finer step), each refitted by least squares. The
// factors are constants so no compiler can fuse their arithmetic differently per tier.
constexpr int kShrinkSteps = 4;
constexpr std::array<float, kShrinkSteps> MakeShrinkFactors() {
  constexpr float kShrink = 0.03f;
  std::array<float, kShrinkSteps> f{};
  for (int s = 0; s < kShrinkSteps; ++s) f[s] = 1.0f - kShrink * static_cast<float>(s);
  return f;
}
constexpr std::array<float, kShrinkSteps> kShrinkFactors = MakeShrinkFactors();
constexpr int kQ4Ends[2] = {0, 15};

}  // namespace qvl::pack
