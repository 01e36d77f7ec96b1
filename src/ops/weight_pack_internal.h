// Helpers shared by the packers of ops/weight_pack.cc, quant_q8.cc and quant_q4.cc.
#pragma once

#include <cstdint>

#include "base/cpu_features.h"
#include "ops/weight_view.h"

namespace qvl::pack {

// Rounds half to even like std::nearbyint for |v| < 2^22, but in two additions the
// compiler vectorizes (packing a 2B model calls it billions of times).
constexpr float kRoundToEvenMagic = 12582912.0f;  // 1.5 * 2^23
inline float RoundToEven(float v) { return (v + kRoundToEvenMagic) - kRoundToEvenMagic; }

// The kPanelRows rows of `panel` as float, padded_k apart (zeros past the matrix), in a
// buffer of the calling thread that the caller may change, valid until its next call.
// Each row is read once, in order: 32 values of 16 rows at a time would touch 16 pages
// per block.
float* ReadPanel(const WeightView& view, int64_t panel, int64_t padded_k);

// Byte offsets inside one 64-K group of a Q8 / Q4 panel.
constexpr int64_t kQ8GroupBytes = 2 * 512 + 2 * 32;
constexpr int64_t kQ4GroupBytes = 2 * 256 + 2 * 32;
constexpr int64_t kQ8ScaleOffset = 1024;
constexpr int64_t kQ4ScaleOffset = 512;

// Quantizes one K block of a panel's rows: rows[r * ld + i] (kPanelRows rows of 32) to
// scales[r] and codes[r * 32 + i], each row as QuantizeQ8Block / QuantizeQ4Block
// quantizes it. The vector tiers (quant_lanes.h) take a block per lane, every lane
// rounding as the scalar steps do, so the packed bytes are the same on every CPU.
using QuantizePanelBlockFn = void (*)(const float* rows, int64_t ld, uint16_t* scales,
                                      uint8_t* codes);
struct PanelBlockQuantizers {
  QuantizePanelBlockFn q8;
  QuantizePanelBlockFn q4;
};
PanelBlockQuantizers ScalarPanelBlockQuantizers();
#if defined(__x86_64__)
PanelBlockQuantizers Avx2PanelBlockQuantizers();
PanelBlockQuantizers Avx512PanelBlockQuantizers();
#endif
// The quantizers of `tier` (the best lower tier that has them).
PanelBlockQuantizers PanelBlockQuantizersFor(CpuTier tier);
// Those of ActiveTier(), chosen once: every tier packs the same bytes, the active one is
// the fastest QVL_CPU allows.
const PanelBlockQuantizers& ActivePanelBlockQuantizers();

// The layout of a Q8 or Q4 panel: each 64-K group of `group_bytes` holds its two blocks'
// codes, as `lay` places a block's (kPanelRows rows of 32, as QuantizePanelBlockFn writes
// them) and `level` reads weight kk of row r back as its signed level, then their float16
// scales at `scale_offset` (two runs of kPanelRows).
struct BlockPanelLayout {
  int64_t group_bytes;
  int64_t scale_offset;
  void (*lay)(const uint8_t* codes, int blk, uint8_t* group);
  int (*level)(const uint8_t* group, int blk, int64_t r, int kk);
};
void PackBlockPanel(const WeightView& view, int64_t panel, int64_t padded_k,
                    QuantizePanelBlockFn quantize, const BlockPanelLayout& layout, uint8_t* dst);
void UnpackBlockRow(const uint8_t* panel, int64_t r, int64_t cols, const BlockPanelLayout& layout,
                    float* out);
void PackQ8Panel(const WeightView& view, int64_t panel, int64_t padded_k, uint8_t* dst);
void PackQ4Panel(const WeightView& view, int64_t panel, int64_t padded_k, uint8_t* dst);
// Byte of weight k of row r inside a W8A8 panel: vector k / 4 holds 4 k of all 16 rows.
inline int64_t W8A8CodeOffset(int64_t k, int64_t r) { return (k / 4) * 64 + r * 4 + k % 4; }

void PackW8A8Panel(const WeightView& view, int64_t panel, int64_t padded_k, uint8_t* dst);
void UnpackQ8Row(const uint8_t* panel, int64_t r, int64_t cols, float* out);
void UnpackQ4Row(const uint8_t* panel, int64_t r, int64_t cols, float* out);
void UnpackW8A8Row(const uint8_t* panel, int64_t r, int64_t cols, int64_t padded_k, float* out);

}  // namespace qvl::pack
