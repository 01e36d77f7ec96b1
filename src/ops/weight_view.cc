#include "ops/weight_view.h"

#include <array>
#include <cstring>

#include "base/bf16.h"
#include "base/error.h"

namespace qvl {
namespace {

// Every code's value: a first start decodes each fp8 weight once, and looking the value
// up took 0.7 s off the 2B's first start against decoding it bit by bit (Zen 5).
const std::array<float, 256>& Fp8Values() {
  static const std::array<float, 256> values = [] {
    std::array<float, 256> v;
    for (int code = 0; code < 256; ++code) v[code] = F8E4M3ToF32(static_cast<uint8_t>(code));
    return v;
  }();
  return values;
}

int64_t CodesPerWord(const WeightView& view) { return 32 / view.code_bits; }

// Bytes of one stored row, rows being contiguous (all but AutoAWQ's and GPTQ's layouts).
int64_t RowBytes(const WeightView& view) {
  if (view.dtype == DType::kI32) {
    const int64_t per_word = CodesPerWord(view);
    return 4 * ((view.cols + per_word - 1) / per_word);
  }
  return view.cols * static_cast<int64_t>(DTypeSize(view.dtype));
}

// The codes of elements [0, n) of a row starting at `base`, as floats.
void ReadCodes(const WeightView& view, const uint8_t* base, int64_t n, float* out) {
  switch (view.dtype) {
    case DType::kF8E4M3: {
      const std::array<float, 256>& values = Fp8Values();
      for (int64_t c = 0; c < n; ++c) out[c] = values[base[c]];
      return;
    }
    case DType::kI8:
      for (int64_t c = 0; c < n; ++c) out[c] = static_cast<float>(static_cast<int8_t>(base[c]));
      return;
    default: {  // kI32, packed: a word at a time
      const int64_t per_word = CodesPerWord(view);
      const uint32_t mask = (1u << view.code_bits) - 1;
      const int offset = 1 << (view.code_bits - 1);
      for (int64_t w = 0; w * per_word < n; ++w) {
        uint32_t word;
        std::memcpy(&word, base + 4 * w, 4);
        const int64_t last = (w + 1) * per_word < n ? (w + 1) * per_word : n;
        for (int64_t c = w * per_word; c < last; ++c, word >>= view.code_bits) {
          out[c] = static_cast<float>(static_cast<int>(word & mask) - offset);
        }
      }
      return;
    }
  }
}

// out[c] = (out[c] - zero) * scale of its block, rounded by `round`, for c in [0, n).
template <typename Round>
void ScaleBlocks(const WeightView& view, int64_t row, int64_t n, float* out, Round round) {
  const int64_t scale_cols = (view.cols + view.block_cols - 1) / view.block_cols;
  if (view.column_groups != nullptr) {
    const int64_t first = (row / view.block_rows) * scale_cols;
    for (int64_t c = 0; c < n; ++c) {
      const int64_t g = first + view.column_groups[c];
      const float zero = view.block_zeros != nullptr ? view.block_zeros[g] : 0.0f;
      out[c] = round((out[c] - zero) * view.block_scales[g]);
    }
    return;
  }
  const int64_t first = row * view.cols;  // the row's first element, for flat blocks
  for (int64_t c0 = 0; c0 < n;) {
    int64_t block, c1;
    if (view.flat_blocks) {
      block = (first + c0) / view.block_cols;
      c1 = (block + 1) * view.block_cols - first;
    } else {
      block = (row / view.block_rows) * scale_cols + c0 / view.block_cols;
      c1 = (c0 / view.block_cols + 1) * view.block_cols;
    }
    c1 = c1 < n ? c1 : n;
    const float scale = view.block_scales[block];
    const float zero = view.block_zeros != nullptr ? view.block_zeros[block] : 0.0f;
    for (int64_t c = c0; c < c1; ++c) out[c] = round((out[c] - zero) * scale);
    c0 = c1;
  }
}

// The 4-bit codes of elements [0, n) of a row of U8 nibbles, as their levels: a byte at a
// time, after the row's first code when it sits in a byte's low bits.
void ReadNibbles(const WeightView& view, int64_t row, int64_t n, float* out) {
  const uint8_t* bytes = static_cast<const uint8_t*>(view.data);
  const float* levels = view.levels;
  int64_t k = row * view.cols, c = 0;
  if ((k & 1) != 0 && n > 0) out[c++] = levels[bytes[k++ >> 1] & 15];
  for (; c + 1 < n; c += 2, k += 2) {
    const uint8_t b = bytes[k >> 1];
    out[c] = levels[b >> 4];
    out[c + 1] = levels[b & 15];
  }
  if (c < n) out[c] = levels[bytes[k >> 1] >> 4];
}

// The codes of elements [0, n) of row `row` in GPTQ's layout, as their unsigned fields.
void ReadGptqCodes(const WeightView& view, int64_t row, int64_t n, float* out) {
  const uint8_t* data = static_cast<const uint8_t*>(view.data);
  const int64_t per_word = CodesPerWord(view);
  const uint32_t mask = (1u << view.code_bits) - 1;
  for (int64_t w = 0; w * per_word < n; ++w) {
    uint32_t word;
    std::memcpy(&word, data + 4 * (w * view.rows + row), 4);
    const int64_t last = (w + 1) * per_word < n ? (w + 1) * per_word : n;
    for (int64_t c = w * per_word; c < last; ++c, word >>= view.code_bits) {
      out[c] = static_cast<float>(word & mask);
    }
  }
}

// The codes of elements [0, n) of row `row` in AutoAWQ's layout: one nibble of a word in
// each column, AwqCode's, with its place in the word worked out once for the row.
void ReadAwqCodes(const WeightView& view, int64_t row, int64_t n, float* out) {
  const int64_t stride = 4 * ((view.rows + 7) / 8);
  const uint8_t* word_of_row = static_cast<const uint8_t*>(view.data) + 4 * (row / 8);
  const int shift = 4 * kAwqNibble[row % 8];
  for (int64_t c = 0; c < n; ++c) {
    uint32_t word;
    std::memcpy(&word, word_of_row + c * stride, 4);
    out[c] = static_cast<float>((word >> shift) & 15u);
  }
}

}  // namespace

const float* FourBitLevels(FourBitType type) {
  static constexpr float kNf4[16] = {-1.0f,
                                     -0.6961928009986877f,
                                     -0.5250730514526367f,
                                     -0.39491748809814453f,
                                     -0.28444138169288635f,
                                     -0.18477343022823334f,
                                     -0.09105003625154495f,
                                     0.0f,
                                     0.07958029955625534f,
                                     0.16093020141124725f,
                                     0.24611230194568634f,
                                     0.33791524171829224f,
                                     0.44070982933044434f,
                                     0.5626170039176941f,
                                     0.7229568362236023f,
                                     1.0f};
  // Code s|e|m (1 sign, 2 exponent, 1 mantissa bits) in bitsandbytes' order, divided by
  // the largest (12) in f32 as get_4bit_type divides.
  static const std::array<float, 16> kFp4 = [] {
    constexpr float kMagnitudes[8] = {0.0f, 0.0625f, 8.0f, 12.0f, 4.0f, 6.0f, 2.0f, 3.0f};
    std::array<float, 16> v;
    for (int code = 0; code < 16; ++code) {
      v[code] = (code & 8 ? -kMagnitudes[code & 7] : kMagnitudes[code & 7]) / 12.0f;
    }
    return v;
  }();
  return type == FourBitType::kNf4 ? kNf4 : kFp4.data();
}

int AwqCode(const void* words, int64_t rows, int64_t r, int64_t c) {
  uint32_t word;
  std::memcpy(&word, static_cast<const uint8_t*>(words) + 4 * (c * ((rows + 7) / 8) + r / 8), 4);
  return static_cast<int>((word >> (4 * kAwqNibble[r % 8])) & 15u);
}

int64_t WeightBytes(const WeightView& view) {
  if (view.dtype == DType::kI32 && view.words == WordLayout::kAwq) {
    return 4 * view.cols * ((view.rows + 7) / 8);
  }
  if (view.dtype == DType::kU8) return (view.rows * view.cols + 1) / 2;
  return view.rows * RowBytes(view);  // GPTQ's ceil(cols / per) x rows words as many
}

void DecodeWeightRow(const WeightView& view, int64_t row, int64_t n, float* out) {
  const int64_t base = row * view.cols;
  switch (view.dtype) {
    case DType::kF32:
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<const float*>(view.data)[base + i];
      return;
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        out[i] = Bf16ToF32(static_cast<const uint16_t*>(view.data)[base + i]);
      }
      return;
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) {
        out[i] = F16ToF32(static_cast<const uint16_t*>(view.data)[base + i]);
      }
      return;
    case DType::kF8E4M3:
    case DType::kI8:
    case DType::kI32:
    case DType::kU8: {
      if (view.block_scales == nullptr || view.block_rows <= 0 || view.block_cols <= 0 ||
          (view.dtype == DType::kI32 && (view.code_bits < 1 || view.code_bits > 8)) ||
          (view.dtype == DType::kU8 && view.levels == nullptr)) {
        Fail(ErrorCode::kInternal, "a weight of ", DTypeName(view.dtype),
             " codes needs its block scales");
      }
      if (view.dtype == DType::kU8) {
        ReadNibbles(view, row, n, out);
      } else if (view.dtype == DType::kI32 && view.words == WordLayout::kAwq) {
        ReadAwqCodes(view, row, n, out);
      } else if (view.dtype == DType::kI32 && view.words == WordLayout::kGptq) {
        ReadGptqCodes(view, row, n, out);
      } else {
        ReadCodes(view, static_cast<const uint8_t*>(view.data) + row * RowBytes(view), n, out);
      }
      // The reference multiplies in the scales' dtype (compressed-tensors, AutoAWQ, GPTQ) or
      // rounds the f32 product to the weight's (bitsandbytes).
      if (view.product == DType::kBF16) {
        ScaleBlocks(view, row, n, out, [](float v) { return Bf16ToF32(F32ToBf16(v)); });
      } else if (view.product == DType::kF16) {
        ScaleBlocks(view, row, n, out, [](float v) { return RoundToF16(v); });
      } else {
        ScaleBlocks(view, row, n, out, [](float v) { return v; });
      }
      return;
    }
    default:
      Fail(ErrorCode::kInvalidArgument, "weight of dtype ", DTypeName(view.dtype),
           " cannot be used in a linear layer");
  }
}

}  // namespace qvl
