// A weight matrix as stored in a checkpoint, used in place (usually inside an mmap):
// row-major [rows, cols] = [out_features, in_features], as F32, BF16 or F16 values or
// as the codes of a pre-quantized checkpoint with their scales (model/quantization_config.h).
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace qvl {

struct WeightView {
  // F32, BF16, F16; codes: F8_E4M3, I8, or I32 words packing 32 / code_bits codes each,
  // the first in the lowest bits, each stored as code + 2^(code_bits - 1).
  DType dtype = DType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
  const void* data = nullptr;
  // Codes only: element (r, c) is (code - zero) * scale of its block_rows x block_cols
  // block, at index (r / block_rows) * ceil(cols / block_cols) + c / block_cols of
  // block_scales and block_zeros (null: no zero points), rounded to `product` (F32: not
  // rounded; BF16 or F16 where the reference multiplies in that dtype).
  int code_bits = 8;
  // I32 in AutoAWQ's layout instead (see AwqCode): 4-bit codes stored as they are.
  bool awq_layout = false;
  const float* block_scales = nullptr;
  const float* block_zeros = nullptr;
  int64_t block_rows = 0;
  int64_t block_cols = 0;
  DType product = DType::kF32;
};

// Value (r, c) of AutoAWQ's 4-bit packing of a [rows, cols] matrix: the words are
// [cols, ceil(rows / 8)], word (c, r / 8) holding value (r, c) at bits 4 * kAwqNibble[r % 8]
// (its "gemm" interleave). AutoAWQ packs its codes and its zero points so.
inline constexpr int kAwqNibble[8] = {0, 4, 1, 5, 2, 6, 3, 7};
int AwqCode(const void* words, int64_t rows, int64_t r, int64_t c);

// Bytes of the stored matrix.
int64_t WeightBytes(const WeightView& view);

// Elements [0, n) of row `row` (n <= cols) as float: exact for every dtype, codes decoded
// as the reference dequantizes them (transformers' Fp8Dequantize, compressed-tensors'
// dequantize). Throws Error(kInvalidArgument) for a dtype no linear layer takes.
void DecodeWeightRow(const WeightView& view, int64_t row, int64_t n, float* out);

}  // namespace qvl
