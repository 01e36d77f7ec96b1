// Q4: a 4-bit index into kQ4Levels per weight and a float16 scale per block of 32 (see
// ops/weight_format.h).
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "base/bf16.h"
#include "ops/quant_q4.h"
#include "ops/weight_format.h"
#include "ops/weight_pack.h"
#include "ops/weight_pack_internal.h"

namespace qvl {
namespace {

using pack::kNearestLevel;
using pack::kNearestValue;
using pack::kZeroLevel;

// Sum of 32 values in a fixed order, as 8 interleaved partial sums: a single running sum
// is a chain of 32 dependent additions, and packing a model runs this ~10^9 times.
float Sum32(const float* v) {
  float partial[8] = {};
  for (int i = 0; i < kQuantBlock; i += 8) {
    for (int l = 0; l < 8; ++l) partial[l] += v[i + l];
  }
  return ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
         ((partial[4] + partial[5]) + (partial[6] + partial[7]));
}

// Where `w` (finite) falls on the integer grid of scale d: w / d rounded, + 128. The
// nearest level to w / d is the one nearest to that point (a level's neighbours are at
// least 9 apart, so this differs only within half a unit of a midpoint).
void GridPoints(const float* w, float d, int32_t* grid) {
  const float inv = 1.0f / d;
  for (int i = 0; i < kQuantBlock; ++i) {
    grid[i] =
        static_cast<int32_t>(pack::RoundToEven(std::clamp(w[i] * inv, -128.0f, 127.0f))) + 128;
  }
}

}  // namespace

uint16_t QuantizeQ4Block(const float* w, uint8_t* codes) {
  float extreme = 0.0f;
  bool finite = true;
  for (int i = 0; i < kQuantBlock; ++i) {
    finite = finite && std::fabs(w[i]) <= FLT_MAX;  // false for NaN and infinity
    if (std::fabs(w[i]) > std::fabs(extreme)) extreme = w[i];
  }
  // Blocks far below the smallest float16 scale are zero (and 1 / d stays finite).
  if (!(std::fabs(extreme) > 1e-30f) || !finite) {
    std::fill(codes, codes + kQuantBlock, kZeroLevel);
    return 0;
  }
  float products[kQuantBlock], squares[kQuantBlock];
  for (int i = 0; i < kQuantBlock; ++i) squares[i] = w[i] * w[i];
  const float energy = Sum32(squares);
  uint16_t best_scale = 0;
  float best_err = INFINITY;
  int32_t grid[kQuantBlock];
  for (const int end : pack::kQ4Ends) {
    for (int s = 0; s < pack::kShrinkSteps; ++s) {
      GridPoints(w, extreme / kQ4Levels[end] * pack::kShrinkFactors[s], grid);
      for (int i = 0; i < kQuantBlock; ++i) {
        const float level = kNearestValue[grid[i]];
        products[i] = w[i] * level;
        squares[i] = level * level;
      }
      // The least-squares scale for these levels, as stored, and the error it leaves:
      // sum (w - d l)^2 = sum w^2 - 2 d sum w l + d^2 sum l^2.
      const float wl = Sum32(products), ll = Sum32(squares);
      const uint16_t scale = F32ToF16(wl / ll);
      const float d = F16ToF32(scale);
      if (!(std::fabs(d) > 0.0f) || !std::isfinite(d)) continue;
      const float err = energy - 2.0f * d * wl + d * d * ll;
      if (err < best_err) {
        best_err = err;
        best_scale = scale;
      }
    }
  }
  if (best_err == INFINITY) {  // too small for a float16 scale
    std::fill(codes, codes + kQuantBlock, kZeroLevel);
    return 0;
  }
  // The nearest levels for the stored scale can only lower the error further.
  GridPoints(w, F16ToF32(best_scale), grid);
  for (int i = 0; i < kQuantBlock; ++i) codes[i] = kNearestLevel[grid[i]];
  return best_scale;
}

namespace pack {
namespace {

// Vector v (of 4) of a block holds 4 k of every row: k groups v (low nibbles) and v + 4
// (high).
void LayQ4Block(const uint8_t* codes, int blk, uint8_t* group) {
  for (int64_t r = 0; r < kPanelRows; ++r) {
    const uint8_t* c = codes + r * kQuantBlock;
    for (int v = 0; v < 4; ++v) {
      for (int j = 0; j < 4; ++j) {
        group[blk * 256 + v * 64 + r * 4 + j] =
            static_cast<uint8_t>(c[v * 4 + j] | c[16 + v * 4 + j] << 4);
      }
    }
  }
}

int Q4Level(const uint8_t* group, int blk, int64_t r, int kk) {
  const int kgroup = kk / 4;
  const uint8_t byte = group[blk * 256 + (kgroup % 4) * 64 + r * 4 + kk % 4];
  return kQ4Levels[(byte >> (4 * (kgroup / 4))) & 0xf];
}

constexpr BlockPanelLayout kQ4Layout = {kQ4GroupBytes, kQ4ScaleOffset, LayQ4Block, Q4Level};

}  // namespace

void PackQ4Panel(const WeightView& view, int64_t panel, int64_t padded_k, uint8_t* dst) {
  PackBlockPanel(view, panel, padded_k, ActivePanelBlockQuantizers().q4, kQ4Layout, dst);
}

void UnpackQ4Row(const uint8_t* panel, int64_t r, int64_t cols, float* out) {
  UnpackBlockRow(panel, r, cols, kQ4Layout, out);
}

}  // namespace pack
}  // namespace qvl
