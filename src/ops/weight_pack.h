// Converting checkpoint matrices into the packed formats of ops/weight_format.h, and
// back (for tests and accuracy reports). Quantization is deterministic: the same input
// always gives the same bytes, so cache files are reproducible.
#pragma once

#include <cstdint>

#include "ops/weight_format.h"
#include "ops/weight_view.h"

namespace qvl {

// Writes panels [first, last) of `view` (F32, BF16 or F16) packed as `format` to dst,
// which receives (last - first) * panel_bytes bytes. Panels are independent, so callers
// split the work over threads or stream it to a file.
void PackPanels(const WeightView& view, WeightFormat format, int64_t first, int64_t last,
                uint8_t* dst);

// Decodes row `row` of a packed weight of shape [rows, cols] to `cols` floats: the
// values the kernels multiply with.
void UnpackRow(const uint8_t* packed, WeightFormat format, int64_t rows, int64_t cols, int64_t row,
               float* out);

// One block of 32 weights quantized: `codes` receive the stored codes, one per byte
// (q + 128 for Q8; for Q4 the index into kQ4Levels), and the float16 scale is returned.
uint16_t QuantizeQ8Block(const float* w, uint8_t* codes);
uint16_t QuantizeQ4Block(const float* w, uint8_t* codes);

}  // namespace qvl
