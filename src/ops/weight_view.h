// A weight matrix as stored in a checkpoint, used in place (usually inside an mmap):
// row-major [rows, cols] = [out_features, in_features], dtype F32, BF16, F16, or F8_E4M3
// with block scales (an fp8 checkpoint's, see model/config.h Fp8Blocks).
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace qvl {

struct WeightView {
  DType dtype = DType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
  const void* data = nullptr;
  // F8_E4M3 only: element (r, c) is data[r, c] * block_scales[(r / block_rows) *
  // ceil(cols / block_cols) + c / block_cols].
  const float* block_scales = nullptr;
  int64_t block_rows = 0;
  int64_t block_cols = 0;
};

// Elements [0, n) of row `row` (n <= cols) as float: exact for every dtype, fp8 times
// its block's scale in f32 as transformers' Fp8Dequantize computes it. Throws
// Error(kInvalidArgument) for a dtype no linear layer takes.
void DecodeWeightRow(const WeightView& view, int64_t row, int64_t n, float* out);

}  // namespace qvl
