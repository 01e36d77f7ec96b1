// The layouts a linear layer's weight matrix W[N, K] can be kept in.
//
// The packed formats cut W into panels of kPanelRows = 16 output rows. Inside a panel the
// same K slice of all 16 rows sits in one 64-byte vector, so a kernel broadcasts a slice
// of x and multiplies it with the vector: lane r accumulates output r, in K order. That
// order is the same for one row of x (decode) and for thousands (prefill, vision), so a
// row's result never depends on how many rows share the call (batch invariance), and
// one copy of the weights serves both GEMV and GEMM.
//
//   kBF16Packed: K padded to 32; vector t holds pairs (x[2t], x[2t+1]) of all 16 rows.
//   kQ8: K padded to 64; per 64 K (two blocks of 32): 2 x 8 vectors of [16 rows][4 k]
//        codes u = q + 128, then 2 x 16 float16 scales. w = scale * q, q in [-127, 127].
//   kQ4: K padded to 64; per 64 K: 2 x 4 vectors whose low nibbles hold k groups 0-3 and
//        high nibbles groups 4-7 of a block, then 2 x 16 float16 scales. A nibble indexes
//        kQ4Levels: w = scale * kQ4Levels[nibble]. The levels are denser near zero,
//        where most weights are, which cuts the rounding error by 10-30 % against evenly
//        spaced levels at the same 4.5 bits per weight.
//   kW8A8: K padded to 64; vector t holds k group t ([16 rows][4 k] codes u = q + 128) of
//        the row rotated (W8A8RotationBlock below), then 16 float32 scales, one per output row:
//        w' = scale * q, q in [-127, 127]. Activations are quantized to int8 per row (see
//        ops/packed_kernels.h), so a row's integer sum runs over all of K with no
//        per-block scales: the layout of one 64-K step of a panel is an AMX int8 B tile.
#pragma once

#include <cstdint>

namespace qvl {

enum class WeightFormat : uint8_t {
  kF32,         // row-major [N, K] float
  kBF16,        // row-major [N, K] bfloat16 (a checkpoint's own layout, used in place)
  kBF16Packed,  // panels, bfloat16
  kQ8,          // panels, int8 + float16 scale per 32
  kQ4,          // panels, 4-bit index into kQ4Levels + float16 scale per 32
  kW8A8,        // panels, int8 of the rotated row + float32 scale per output row
};

const char* WeightFormatName(WeightFormat format);

// Parses "f32", "bf16", "bf16-packed", "q8", "q4", "w8a8"; returns false for anything else.
bool ParseWeightFormat(const char* name, WeightFormat* out);

bool IsPacked(WeightFormat format);

constexpr int64_t kPanelRows = 16;
constexpr int64_t kQuantBlock = 32;  // K values per scale in kQ8 / kQ4

// The values a kQ4 nibble stands for, in units of the block's scale: the mean of two
// Lloyd-Max fits (alternating best scale per block and best levels) to blocks of 32
// normal and Student-t (4 degrees of freedom) weights, rounded to integers so the int8
// kernels use them as they are. Not symmetric: the quantizer puts a block's largest
// magnitude on -127 or on 96, whichever fits the block better.
constexpr int8_t kQ4Levels[16] = {-127, -88, -68, -52, -39, -28, -18, -9,
                                  0,    9,   19,  29,  42,  56,  74,  96};
// The same levels as unsigned codes (level + 128), the weight operand vpdpbusd takes.
constexpr uint8_t kQ4Codes[16] = {1,   40,  60,  76,  89,  100, 110, 119,
                                  128, 137, 147, 157, 170, 184, 202, 224};
static_assert([] {
  for (int j = 0; j < 16; ++j)
    if (kQ4Codes[j] != kQ4Levels[j] + 128) return false;
  return true;
}());

// kW8A8 rotates each row of W and of x over blocks of W8A8RotationBlock(padded K) values
// with the unnormalized Walsh-Hadamard transform H (entries +-1, H H = block * I): x W^T =
// (x H)(W H / block)^T. The rotation spreads an outlier channel over the whole block, so
// one int8 step per row (activations) or per output (weights) fits every value, as in
// QuaRot (Ashkboos et al., 2024). The block is the largest power of two dividing padded K.
int64_t W8A8RotationBlock(int64_t padded_k);

// The deepest K a kW8A8 weight may have: its int32 sums stay exact up to here.
constexpr int64_t kW8A8MaxDepth = 32768;

// Sizes of a packed weight.
struct PackedLayout {
  int64_t panels = 0;       // ceil(N / 16); rows past N are zero
  int64_t padded_k = 0;     // K rounded up; columns past K are zero
  int64_t panel_bytes = 0;  // a multiple of 64
  int64_t bytes() const { return panels * panel_bytes; }
};

// Layout of a packed `format` for W[rows, cols]. Throws Error(kInvalidArgument) for a
// format that is not packed.
PackedLayout PackedLayoutFor(WeightFormat format, int64_t rows, int64_t cols);

}  // namespace qvl
