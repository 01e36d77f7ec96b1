// Q8: symmetric int8 per block of 32 with a float16 scale (see ops/weight_format.h).
#include <algorithm>
#include <cmath>

#include "base/bf16.h"
#include "ops/weight_format.h"
#include "ops/weight_pack.h"
#include "ops/weight_pack_internal.h"

namespace qvl {

uint16_t QuantizeQ8Block(const float* w, uint8_t* codes) {
  float amax = 0.0f;
  for (int i = 0; i < kQuantBlock; ++i) amax = std::max(amax, std::fabs(w[i]));
  // Quantize against the scale as stored, so the codes fit the float16 value exactly.
  const uint16_t scale = F32ToF16(amax / 127.0f);
  const float d = F16ToF32(scale);
  for (int i = 0; i < kQuantBlock; ++i) {
    const float q = d > 0.0f ? pack::RoundToEven(w[i] / d) : 0.0f;
    codes[i] = static_cast<uint8_t>(static_cast<int>(std::clamp(q, -127.0f, 127.0f)) + 128);
  }
  return scale;
}

namespace pack {
namespace {

// Vector k / 4 of a block holds 4 k of every row, a byte each.
void LayQ8Block(const uint8_t* codes, int blk, uint8_t* group) {
  for (int64_t r = 0; r < kPanelRows; ++r) {
    for (int k = 0; k < kQuantBlock; ++k) {
      group[blk * 512 + (k / 4) * 64 + r * 4 + k % 4] = codes[r * kQuantBlock + k];
    }
  }
}

int Q8Level(const uint8_t* group, int blk, int64_t r, int kk) {
  return group[blk * 512 + (kk / 4) * 64 + r * 4 + kk % 4] - 128;
}

constexpr BlockPanelLayout kQ8Layout = {kQ8GroupBytes, kQ8ScaleOffset, LayQ8Block, Q8Level};

}  // namespace

void PackBlockPanel(const WeightView& view, int64_t panel, int64_t padded_k,
                    QuantizePanelBlockFn quantize, const BlockPanelLayout& layout, uint8_t* dst) {
  const float* rows = ReadPanel(view, panel, padded_k);
  uint8_t codes[kPanelRows * kQuantBlock];
  for (int64_t g = 0; g < padded_k / 64; ++g) {
    uint8_t* group = dst + g * layout.group_bytes;
    uint16_t* scales = reinterpret_cast<uint16_t*>(group + layout.scale_offset);
    for (int blk = 0; blk < 2; ++blk) {
      quantize(rows + g * 64 + blk * kQuantBlock, padded_k, scales + blk * kPanelRows, codes);
      layout.lay(codes, blk, group);
    }
  }
}

void UnpackBlockRow(const uint8_t* panel, int64_t r, int64_t cols, const BlockPanelLayout& layout,
                    float* out) {
  for (int64_t k = 0; k < cols; ++k) {
    const uint8_t* group = panel + (k / 64) * layout.group_bytes;
    const int blk = static_cast<int>(k % 64) / kQuantBlock;
    const uint16_t* scales = reinterpret_cast<const uint16_t*>(group + layout.scale_offset);
    const int level = layout.level(group, blk, r, static_cast<int>(k % kQuantBlock));
    out[k] = F16ToF32(scales[blk * kPanelRows + r]) * static_cast<float>(level);
  }
}

void PackQ8Panel(const WeightView& view, int64_t panel, int64_t padded_k, uint8_t* dst) {
  PackBlockPanel(view, panel, padded_k, ActivePanelBlockQuantizers().q8, kQ8Layout, dst);
}

void UnpackQ8Row(const uint8_t* panel, int64_t r, int64_t cols, float* out) {
  UnpackBlockRow(panel, r, cols, kQ8Layout, out);
}

}  // namespace pack
}  // namespace qvl
