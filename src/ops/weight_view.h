// A weight matrix as stored in a checkpoint, used in place (usually inside an mmap):
// row-major [rows, cols] = [out_features, in_features], as F32, BF16 or F16 values or
// as the codes of a pre-quantized checkpoint with their scales (model/quantization_config.h).
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace qvl {

// How the I32 words of packed codes are laid out, for a [rows, cols] weight.
enum class WordLayout : uint8_t {
  // [rows, ceil(cols / per)]: each row's codes in turn, the first in a word's lowest bits
  // (compressed-tensors' pack-quantized).
  kRows,
  // [cols, ceil(rows / 8)]: 4-bit codes of 8 rows a word in AutoAWQ's order (AwqCode).
  kAwq,
  // [ceil(cols / per), rows]: word (c / per, r) holds code (r, c) at bits
  // code_bits x (c mod per), lowest first (GPTQ's qweight).
  kGptq,
};

struct WeightView {
  // F32, BF16, F16; codes: F8_E4M3, I8, I32 words packing 32 / code_bits codes each
  // (`words`; in rows each stored as code + 2^(code_bits - 1), in AutoAWQ's and GPTQ's
  // layouts as the unsigned field, their zero points alike), or U8 (see `levels`).
  DType dtype = DType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
  const void* data = nullptr;
  // Codes only: element (r, c) is (code - zero) * scale of its block_rows x block_cols
  // block, at index (r / block_rows) * ceil(cols / block_cols) + c / block_cols of
  // block_scales and block_zeros (null: no zero points), rounded to `product` (F32: not
  // rounded; BF16 or F16 where the reference multiplies in that dtype).
  int code_bits = 8;
  // How I32 words hold the codes (see WordLayout).
  WordLayout words = WordLayout::kRows;
  // U8: two 4-bit codes a byte, element k of the row-major matrix in byte k / 2 (the even
  // one in the high bits), code i standing for levels[i] (bitsandbytes' 4-bit weights).
  const float* levels = nullptr;
  // The blocks are runs of block_cols consecutive elements of the row-major matrix, which
  // may cross rows (bitsandbytes), instead of block_rows x block_cols tiles.
  bool flat_blocks = false;
  // A group per column instead of blocks of block_cols columns: element (r, c) takes
  // scale and zero point (r / block_rows) * ceil(cols / block_cols) + column_groups[c]
  // (GPTQ's g_idx with act-order, compressed-tensors' weight_g_idx).
  const int32_t* column_groups = nullptr;
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

// bitsandbytes' 4-bit data types.
enum class FourBitType : uint8_t { kNf4, kFp4 };
// The 16 values `type`'s codes stand for, as bitsandbytes' get_4bit_type gives them:
// NormalFloat's quantiles of N(0, 1), or fp4's e2m1 values over 12, in [-1, 1].
const float* FourBitLevels(FourBitType type);

// Bytes of the stored matrix.
int64_t WeightBytes(const WeightView& view);

// Elements [0, n) of row `row` (n <= cols) as float: exact for every dtype, codes decoded
// as the reference dequantizes them (transformers' Fp8Dequantize, compressed-tensors'
// dequantize, AutoAWQ's dequantize_gemm, bitsandbytes' dequantize_4bit). Throws
// Error(kInvalidArgument) for a dtype no linear layer takes.
void DecodeWeightRow(const WeightView& view, int64_t row, int64_t n, float* out);

}  // namespace qvl
