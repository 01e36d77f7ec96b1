// The packed layouts of quantized checkpoints' codes: compressed-tensors' words along the
// rows, AutoAWQ's interleaved columns, GPTQ's words along the inputs with their groups.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "base/bf16.h"
#include "model/broken_weights_for_test.h"
#include "model/weights.h"

namespace qvl {
namespace {

// compressed-tensors' pack-quantized W4A16 with zero points: up_proj [128, 64] as
// weight_packed [128, 8] (8 codes a word, lowest bits first, each + 8), weight_shape,
// BF16 weight_scale [128, 2] (groups of 32) and weight_zero_point [16, 2] packed along
// the rows.
class PackedCodes : public BrokenWeights {
 protected:
  static constexpr char kPrefix[] = "model.language_model.layers.3.mlp.up_proj";
  static std::string Name(const char* suffix) { return std::string(kPrefix) + suffix; }
  static int Code(int64_t r, int64_t c) { return static_cast<int>((r * 7 + c * 3) % 16) - 8; }
  static int Zero(int64_t r, int64_t g) { return static_cast<int>((r + 5 * g) % 16) - 8; }
  static float Scale(int64_t r, int64_t g) {
    return 0.0078125f * static_cast<float>(1 + (r + g) % 5);
  }

  PackedCodes() {
    config_.weight_quant = {WeightQuantization::Method::kCompressedTensors,
                            DType::kI32,
                            4,
                            /*symmetric=*/false,
                            1,
                            32};
    Erase(tensors_, Name(".weight"));
    std::vector<uint32_t> words(128 * 8, 0), zeros(16 * 2, 0);
    std::vector<uint16_t> scales(128 * 2);
    for (int64_t r = 0; r < 128; ++r) {
      for (int64_t c = 0; c < 64; ++c)
        words[r * 8 + c / 8] |= uint32_t(Code(r, c) + 8) << (4 * (c % 8));
      for (int64_t g = 0; g < 2; ++g) {
        zeros[(r / 8) * 2 + g] |= uint32_t(Zero(r, g) + 8) << (4 * (r % 8));
        scales[r * 2 + g] = F32ToBf16(Scale(r, g));
      }
    }
    const std::vector<int64_t> shape = {128, 64};
    Add(Name(".weight_packed"), DType::kI32, {128, 8}, words);
    Add(Name(".weight_shape"), DType::kI64, {2}, shape);
    Add(Name(".weight_scale"), DType::kBF16, {128, 2}, scales);
    Add(Name(".weight_zero_point"), DType::kI32, {16, 2}, zeros);
  }
};

TEST_F(PackedCodes, DecodeAsCompressedTensorsDequantizes) {
  ASSERT_EQ(MapError(), "");
  const TensorStore store({path_});
  const Qwen3VLWeights w = MapQwen3VLWeights(store, config_);
  const WeightView& up = w.text.layers[3].up_proj;
  ASSERT_EQ(up.dtype, DType::kI32);
  EXPECT_EQ(up.rows, 128);
  EXPECT_EQ(up.cols, 64);
  EXPECT_EQ(up.product, DType::kBF16);
  EXPECT_EQ(WeightBytes(up), 128 * 32);
  for (int64_t row : {0, 7, 8, 127}) {
    std::vector<float> decoded(64);
    DecodeWeightRow(up, row, 64, decoded.data());
    for (int64_t c = 0; c < 64; ++c) {
      // (code - zero) x scale in bf16, as compressed-tensors computes with BF16 scales.
      const float want = Bf16ToF32(F32ToBf16(static_cast<float>(Code(row, c) - Zero(row, c / 32)) *
                                             Bf16ToF32(F32ToBf16(Scale(row, c / 32)))));
      EXPECT_EQ(decoded[c], want) << row << "," << c;
    }
  }
}

TEST_F(PackedCodes, RefusesWhatDoesNotFit) {
  const int64_t wrong[2] = {128, 63};
  std::memcpy(FindTensor(tensors_, Name(".weight_shape"))->bytes.data(), wrong, 16);
  EXPECT_EQ(MapError(), path_ + ": tensor " + Name(".weight_shape") +
                            " does not hold [128, 64], the shape of " + Name(".weight"));
  const int64_t right[2] = {128, 64};
  std::memcpy(FindTensor(tensors_, Name(".weight_shape"))->bytes.data(), right, 16);
  FindTensor(tensors_, Name(".weight_zero_point"))->spec.shape = {32, 1};
  EXPECT_EQ(MapError(), path_ + ": tensor " + Name(".weight_zero_point") +
                            " has shape [32, 1], expected [16, 2] (the zero points packed along "
                            "the rows of the scales)");
  Erase(tensors_, Name(".weight_zero_point"));
  EXPECT_EQ(MapError(), path_ + ": tensor " + Name(".weight_zero_point") + " is missing");
  config_.weight_quant.block_cols = 16;
  EXPECT_EQ(MapError(), path_ + ": tensor " + Name(".weight_scale") +
                            " has shape [128, 2], expected [128, 4] (one scale per group of 16 "
                            "of " +
                            Name(".weight") + ", as config.json's quantization_config says)");
  config_.weight_quant.block_cols = 32;
  config_.weight_quant.symmetric = true;
  EXPECT_EQ(MapError(), "");
  FindTensor(tensors_, Name(".weight_packed"))->spec.shape = {64, 16};
  EXPECT_EQ(MapError(), path_ + ": tensor " + Name(".weight_packed") +
                            " has shape [64, 16], expected [128, 8] (" + Name(".weight") +
                            " [128, 64] in words of 8 codes)");
  config_.weight_quant = {};
  EXPECT_EQ(MapError(), path_ + ": tensor " + Name(".weight") + " is missing");
}

// AutoAWQ's layout: up_proj [128, 64] as qweight [64, 16], every word 0x76543210, so
// output j of each 8 reads the nibble at bits 16 * (j & 1) + 4 * (j >> 1): codes 0, 4, 1,
// 5, 2, 6, 3, 7; qzeros [2, 16] all 8; F16 scales [2, 128] of 0.5 and 0.25 (groups of 32).
TEST_F(BrokenWeights, AwqWeightsDecodeInAutoAwqsOrder) {
  const std::string prefix = "model.language_model.layers.3.mlp.up_proj";
  config_.weight_quant = {WeightQuantization::Method::kAwq, DType::kI32, 4, false, 1, 32};
  Erase(tensors_, prefix + ".weight");
  Add(prefix + ".qweight", DType::kI32, {64, 16}, std::vector<uint32_t>(64 * 16, 0x76543210u));
  Add(prefix + ".qzeros", DType::kI32, {2, 16}, std::vector<uint32_t>(2 * 16, 0x88888888u));
  std::vector<uint16_t> scales(2 * 128, F32ToF16(0.5f));
  std::fill(scales.begin() + 128, scales.end(), F32ToF16(0.25f));
  Add(prefix + ".scales", DType::kF16, {2, 128}, scales);
  ASSERT_EQ(MapError(), "");
  const TensorStore store({path_});
  const Qwen3VLWeights w = MapQwen3VLWeights(store, config_);
  const WeightView& up = w.text.layers[3].up_proj;
  EXPECT_EQ(up.rows, 128);
  EXPECT_EQ(up.cols, 64);
  EXPECT_EQ(WeightBytes(up), 64 * 16 * 4);
  const int codes[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  for (int64_t row : {0, 1, 2, 7, 9, 127}) {
    std::vector<float> decoded(64);
    DecodeWeightRow(up, row, 64, decoded.data());
    for (int64_t c = 0; c < 64; ++c) {
      EXPECT_EQ(decoded[c], (codes[row % 8] - 8) * (c < 32 ? 0.5f : 0.25f)) << row << "," << c;
    }
  }
  FindTensor(tensors_, prefix + ".scales")->spec.shape = {128, 2};
  EXPECT_EQ(MapError(), path_ + ": tensor " + prefix +
                            ".scales has shape [128, 2], expected [2, 128] (one scale per group "
                            "of 32 of " +
                            prefix +
                            ".weight, transposed, as config.json's quantization_config "
                            "says)");
}

// GPTQ's layout with act-order: up_proj [128, 64] as qweight [8, 128] (code (o, i) =
// (o + 3 i) mod 16 at bits 4 (i mod 8) of word (i / 8, o)), g_idx alternating the two
// groups of 32, qzeros [2, 16] in the v1 format (zero (g, o) = (o + 5 g) mod 15 + 1,
// stored minus 1) and F16 scales [2, 128]. The first qzeros word holds 15 for output 0:
// adding 1 to every field of the word at once, as GPTQModel does, carries into output 1.
TEST_F(BrokenWeights, GptqWeightsDecodeInTheirGroupOrder) {
  const std::string prefix = "model.language_model.layers.3.mlp.up_proj";
  config_.weight_quant = {.method = WeightQuantization::Method::kGptq,
                          .codes = DType::kI32,
                          .bits = 4,
                          .symmetric = false,
                          .block_rows = 1,
                          .block_cols = 32,
                          .column_groups = true,
                          .zeros_minus_one = true};
  Erase(tensors_, prefix + ".weight");
  const auto code = [](int64_t o, int64_t i) { return static_cast<uint32_t>((o + 3 * i) % 16); };
  const auto zero = [](int64_t g, int64_t o) { return static_cast<int>((o + 5 * g) % 15 + 1); };
  const auto scale = [](int64_t g, int64_t o) {
    return F16ToF32(F32ToF16(0.0078125f * static_cast<float>(1 + (o + g) % 5)));
  };
  std::vector<uint32_t> qweight(8 * 128, 0), qzeros(2 * 16, 0);
  std::vector<uint16_t> scales(2 * 128);
  std::vector<int32_t> g_idx(64);
  for (int64_t i = 0; i < 64; ++i) {
    g_idx[i] = static_cast<int32_t>(i % 2);
    for (int64_t o = 0; o < 128; ++o) qweight[(i / 8) * 128 + o] |= code(o, i) << (4 * (i % 8));
  }
  for (int64_t g = 0; g < 2; ++g) {
    for (int64_t o = 0; o < 128; ++o) {
      qzeros[g * 16 + o / 8] |= static_cast<uint32_t>(zero(g, o) - 1) << (4 * (o % 8));
      scales[g * 128 + o] = F32ToF16(scale(g, o));
    }
  }
  qzeros[0] = 0x0000000fu;  // outputs 0..7 of group 0: 16, 1, 1, ... minus 1
  Add(prefix + ".qweight", DType::kI32, {8, 128}, qweight);
  Add(prefix + ".qzeros", DType::kI32, {2, 16}, qzeros);
  Add(prefix + ".scales", DType::kF16, {2, 128}, scales);
  Add(prefix + ".g_idx", DType::kI32, {64}, g_idx);
  ASSERT_EQ(MapError(), "");
  const TensorStore store({path_});
  const Qwen3VLWeights w = MapQwen3VLWeights(store, config_);
  const WeightView& up = w.text.layers[3].up_proj;
  EXPECT_EQ(up.rows, 128);
  EXPECT_EQ(up.cols, 64);
  EXPECT_EQ(WeightBytes(up), 8 * 128 * 4);
  for (int64_t row : {0, 1, 2, 7, 8, 127}) {
    std::vector<float> decoded(64);
    DecodeWeightRow(up, row, 64, decoded.data());
    for (int64_t i = 0; i < 64; ++i) {
      const int64_t g = i % 2;
      int z = zero(g, row);
      if (g == 0 && row < 8) z = row == 0 ? 0 : row == 1 ? 2 : 1;  // 0x0000000f + 0x11111111
      const float want = F16ToF32(
          F32ToF16(static_cast<float>(static_cast<int>(code(row, i)) - z) * scale(g, row)));
      EXPECT_EQ(decoded[i], want) << row << "," << i;
    }
  }
  g_idx[5] = 2;
  Erase(tensors_, prefix + ".g_idx");
  Add(prefix + ".g_idx", DType::kI32, {64}, g_idx);
  EXPECT_EQ(MapError(), path_ + ": tensor " + prefix +
                            ".g_idx puts column 5 in group 2; the weight has 2 groups");
  FindTensor(tensors_, prefix + ".qzeros")->spec.shape = {1, 32};
  EXPECT_EQ(MapError(), path_ + ": tensor " + prefix +
                            ".qzeros has shape [1, 32], expected [2, 16] (the zero points packed "
                            "along the outputs)");
}

}  // namespace
}  // namespace qvl
