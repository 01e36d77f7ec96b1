#include "ops/weight_view.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/bf16.h"

namespace qvl {
namespace {

// bitsandbytes' 4-bit codes of a [3, 5] matrix in flat blocks of 4: odd rows start in a
// byte's low bits and blocks change in the middle of rows. Each value is read here one
// element at a time, as dequantize_4bit's flat loop does.
TEST(WeightView, FourBitCodesDecodeOverTheFlattenedMatrix) {
  const std::vector<uint8_t> bytes = {0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78};
  const std::vector<float> absmax = {0.5f, 2.0f, 0.25f, 3.0f};
  WeightView v;
  v.dtype = DType::kU8;
  v.rows = 3;
  v.cols = 5;
  v.data = bytes.data();
  v.levels = FourBitLevels(FourBitType::kNf4);
  v.flat_blocks = true;
  v.block_rows = 1;
  v.block_cols = 4;
  v.block_scales = absmax.data();
  v.product = DType::kBF16;
  EXPECT_EQ(WeightBytes(v), 8);
  for (int64_t row = 0; row < v.rows; ++row) {
    for (int64_t n : {int64_t{5}, int64_t{2}, int64_t{1}}) {
      std::vector<float> out(static_cast<size_t>(n), -99.0f);
      DecodeWeightRow(v, row, n, out.data());
      for (int64_t c = 0; c < n; ++c) {
        const int64_t k = row * v.cols + c;
        const int code = k % 2 == 0 ? bytes[k / 2] >> 4 : bytes[k / 2] & 15;
        const float want = Bf16ToF32(F32ToBf16(v.levels[code] * absmax[k / 4]));
        EXPECT_EQ(out[c], want) << row << "," << c << " of " << n;
      }
    }
  }
}

}  // namespace
}  // namespace qvl
