#include "model/bitsandbytes_weights.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "base/bf16.h"
#include "model/broken_weights_for_test.h"
#include "model/quantized_folder_for_test.h"

namespace qvl {
namespace {

using ::testing::HasSubstr;

constexpr char kUp[] = "model.language_model.layers.3.mlp.up_proj.weight";  // [128, 64]
constexpr int64_t kRows = 128, kCols = 64, kValues = kRows * kCols;

std::string Name(const char* suffix) { return std::string(kUp) + suffix; }

// up_proj as bitsandbytes' 4-bit codes: byte i is (7 i + 3) mod 256, absmax of block b
// 0.5 + 0.125 (b mod 5), or when nested 8-bit codes 13 b mod 256 of levels j / 255 - 0.5
// scaled per 64 by 1, 2, 0.5, 4, ... plus 0.25.
class Bnb4BitWeights : public BrokenWeights {
 protected:
  void Encode(FourBitType type, int64_t blocksize, bool nested, const char* dtype) {
    config_.weight_quant = {.method = WeightQuantization::Method::kBitsAndBytes,
                            .codes = DType::kU8,
                            .bits = 4,
                            .four_bit = type};
    type_ = type;
    blocksize_ = blocksize;
    nested_ = nested;
    Erase(tensors_, kUp);
    std::vector<uint8_t> bytes(kValues / 2);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(7 * i + 3);
    Add(kUp, DType::kU8, {kValues / 2, 1}, bytes);
    const int64_t blocks = kValues / blocksize;
    std::vector<float> levels(16);
    for (int code = 0; code < 16; ++code) levels[code] = quantized_for_test::Bnb4Level(type, code);
    Add(Name(".quant_map"), DType::kF32, {16}, levels);
    state_ = {{"quant_type", type == FourBitType::kNf4 ? "nf4" : "fp4"},
              {"blocksize", blocksize},
              {"dtype", dtype},
              {"shape", {kRows, kCols}}};
    if (nested) {
      std::vector<uint8_t> codes(static_cast<size_t>(blocks));
      for (int64_t b = 0; b < blocks; ++b) codes[b] = static_cast<uint8_t>(13 * b);
      std::vector<float> map(256), scales(static_cast<size_t>((blocks + 63) / 64));
      for (int j = 0; j < 256; ++j) map[j] = static_cast<float>(j) / 255.0f - 0.5f;
      for (size_t j = 0; j < scales.size(); ++j) scales[j] = std::ldexp(1.0f, int(j % 4) - 1);
      Add(Name(".absmax"), DType::kU8, {blocks}, codes);
      Add(Name(".nested_absmax"), DType::kF32, {static_cast<int64_t>(scales.size())}, scales);
      Add(Name(".nested_quant_map"), DType::kF32, {256}, map);
      state_["nested_blocksize"] = 64;
      state_["nested_dtype"] = "float32";
      state_["nested_offset"] = 0.25;
    } else {
      std::vector<float> absmax(static_cast<size_t>(blocks));
      for (int64_t b = 0; b < blocks; ++b) absmax[b] = 0.5f + 0.125f * static_cast<float>(b % 5);
      Add(Name(".absmax"), DType::kF32, {blocks}, absmax);
    }
    WriteState();
  }

  std::string StateName() const {
    return Name(type_ == FourBitType::kNf4 ? ".quant_state.bitsandbytes__nf4"
                                           : ".quant_state.bitsandbytes__fp4");
  }

  // Replaces the quant_state tensor with state_'s JSON (or `text`).
  void WriteState(const std::string& text = "") {
    const std::string json = text.empty() ? state_.dump() : text;
    for (size_t i = 0; i < tensors_.size(); ++i) {
      if (tensors_[i].spec.name == StateName()) tensors_.erase(tensors_.begin() + i);
    }
    Add(StateName(), DType::kU8, {static_cast<int64_t>(json.size())},
        std::vector<char>(json.begin(), json.end()));
  }

  // Value k of the flattened weight as bitsandbytes' dequantize_4bit gives it, before
  // rounding to the weight's dtype.
  float Want(int64_t k) const {
    const uint8_t byte = static_cast<uint8_t>(7 * (k / 2) + 3);
    const int code = k % 2 == 0 ? byte >> 4 : byte & 15;
    const int64_t b = k / blocksize_;
    float absmax = 0.5f + 0.125f * static_cast<float>(b % 5);
    if (nested_) {
      const float level = static_cast<float>(static_cast<uint8_t>(13 * b)) / 255.0f - 0.5f;
      const float product = level * std::ldexp(1.0f, int((b / 64) % 4) - 1);
      absmax = product + 0.25f;
    }
    return quantized_for_test::Bnb4Level(type_, code) * absmax;
  }

  FourBitType type_ = FourBitType::kNf4;
  int64_t blocksize_ = 64;
  bool nested_ = false;
  nlohmann::json state_;
};

// Blocks of 128 values span two rows of 64.
TEST_F(Bnb4BitWeights, DecodeAsDequantize4bit) {
  Encode(FourBitType::kNf4, 128, false, "bfloat16");
  ASSERT_EQ(MapError(), "");
  const TensorStore store({path_});
  const Qwen3VLWeights w = MapQwen3VLWeights(store, config_);
  const WeightView& up = w.text.layers[3].up_proj;
  ASSERT_EQ(up.dtype, DType::kU8);
  EXPECT_EQ(up.rows, kRows);
  EXPECT_EQ(up.cols, kCols);
  EXPECT_EQ(up.product, DType::kBF16);
  EXPECT_EQ(WeightBytes(up), kValues / 2);
  for (int64_t row : {0, 1, 2, 63, 127}) {
    std::vector<float> decoded(kCols);
    DecodeWeightRow(up, row, kCols, decoded.data());
    for (int64_t c = 0; c < kCols; ++c) {
      EXPECT_EQ(decoded[c], Bf16ToF32(F32ToBf16(Want(row * kCols + c)))) << row << "," << c;
    }
  }
}

TEST_F(Bnb4BitWeights, DecodeDoubleQuantizedAbsmax) {
  Encode(FourBitType::kFp4, 32, true, "float16");
  ASSERT_EQ(MapError(), "");
  const TensorStore store({path_});
  const Qwen3VLWeights w = MapQwen3VLWeights(store, config_);
  const WeightView& up = w.text.layers[3].up_proj;
  EXPECT_EQ(up.product, DType::kF16);
  for (int64_t row : {0, 31, 64, 127}) {
    std::vector<float> decoded(kCols);
    DecodeWeightRow(up, row, kCols, decoded.data());
    for (int64_t c = 0; c < kCols; ++c) {
      EXPECT_EQ(decoded[c], F16ToF32(F32ToF16(Want(row * kCols + c)))) << row << "," << c;
    }
  }
}

TEST_F(Bnb4BitWeights, RefuseWhatDoesNotFit) {
  Encode(FourBitType::kNf4, 64, true, "bfloat16");
  ASSERT_EQ(MapError(), "");
  const std::string state = path_ + ": tensor " + StateName();
  state_["shape"] = {64, 128};
  WriteState();
  EXPECT_EQ(MapError(), state + " gives the shape of " + kUp +
                            " as [64, 128]; the model's config.json makes it [128, 64]");
  state_["shape"] = {kRows, kCols};
  state_["blocksize"] = 96;
  WriteState();
  EXPECT_EQ(MapError(), state + ": blocksize is 96; bitsandbytes' block sizes are powers of two");
  state_["blocksize"] = 64;
  state_["dtype"] = "int8";
  WriteState();
  EXPECT_EQ(MapError(), state +
                            ": dtype is \"int8\"; 4-bit weights dequantize to \"bfloat16\", "
                            "\"float16\" or \"float32\"");
  state_["dtype"] = "bfloat16";
  state_["quant_type"] = "fp4";
  WriteState();
  EXPECT_EQ(MapError(), state +
                            ": quant_type is \"fp4\", but config.json's quantization_config "
                            "says \"nf4\"");
  state_["quant_type"] = "nf4";
  state_.erase("nested_offset");
  WriteState();
  EXPECT_EQ(MapError(), state + ": nested_offset is missing");
  WriteState("{\"quant_type\": ");
  EXPECT_THAT(MapError(), HasSubstr(state + ": malformed JSON"));
  state_["nested_offset"] = 0.25;
  WriteState();
  ASSERT_EQ(MapError(), "");

  FindTensor(tensors_, Name(".absmax"))->spec.shape = {64, 2};
  EXPECT_EQ(MapError(), path_ + ": tensor " + Name(".absmax") +
                            " is U8 [64, 2]; one absmax per 64 values, as 8-bit codes (double "
                            "quantization), should be U8 [128]");
  FindTensor(tensors_, Name(".absmax"))->spec.shape = {128};
  TensorData* nested = FindTensor(tensors_, Name(".nested_absmax"));
  const TensorData f32_nested = *nested;
  nested->spec.dtype = DType::kBF16;
  nested->bytes.resize(4);
  EXPECT_EQ(MapError(), path_ + ": tensor " + Name(".nested_absmax") +
                            " is BF16 [2]; one scale per 64 absmax codes should be F32 [2]");
  *nested = f32_nested;
  FindTensor(tensors_, kUp)->spec.shape = {2048, 2};
  EXPECT_EQ(MapError(), path_ + ": tensor " + kUp +
                            " is U8 [2048, 2]; its 4-bit codes, two a byte, should be U8 "
                            "[4096, 1]");
  FindTensor(tensors_, kUp)->spec.shape = {4096, 1};
  Erase(tensors_, Name(".quant_map"));
  EXPECT_EQ(MapError(), path_ + ": tensor " + Name(".quant_map") + " is missing");
  config_.weight_quant = {};
  EXPECT_EQ(MapError(), path_ + ": tensor " + kUp +
                            " has dtype U8, but config.json has no quantization_config saying "
                            "how its codes are scaled");
}

// load_in_8bit: up_proj as int8 codes (r + 3 c) mod 256, SCB row r 1 + r / 8, and
// weight_format 0 (row-major).
TEST_F(BrokenWeights, Bnb8BitWeightsDecodeAsCodeTimesScbOver127) {
  config_.weight_quant = {
      .method = WeightQuantization::Method::kBitsAndBytes, .codes = DType::kI8, .block_rows = 1};
  std::vector<int8_t> codes(kValues);
  for (int64_t k = 0; k < kValues; ++k) codes[k] = static_cast<int8_t>(k / kCols + 3 * (k % kCols));
  std::vector<float> scb(kRows);
  for (int64_t r = 0; r < kRows; ++r) scb[r] = 1.0f + static_cast<float>(r) / 8.0f;
  Erase(tensors_, kUp);
  Add(kUp, DType::kI8, {kRows, kCols}, codes);
  const std::string prefix = "model.language_model.layers.3.mlp.up_proj";
  Add(prefix + ".SCB", DType::kF32, {kRows}, scb);
  Add(Name("_format"), DType::kU8, {}, std::vector<uint8_t>{0});
  ASSERT_EQ(MapError(), "");
  const TensorStore store({path_});
  const Qwen3VLWeights w = MapQwen3VLWeights(store, config_);
  const WeightView& up = w.text.layers[3].up_proj;
  for (int64_t row : {0, 5, 127}) {
    std::vector<float> decoded(kCols);
    DecodeWeightRow(up, row, kCols, decoded.data());
    for (int64_t c = 0; c < kCols; ++c) {
      const float scale = scb[row] * static_cast<float>(1.0 / 127.0);
      EXPECT_EQ(decoded[c], static_cast<float>(codes[row * kCols + c]) * scale) << row << "," << c;
    }
  }
  FindTensor(tensors_, Name("_format"))->bytes = {2};
  EXPECT_EQ(MapError(), path_ + ": tensor " + Name("_format") +
                            " says layout 2; qvl reads 8-bit weights stored row-major (0, "
                            "\"row\")");
}

}  // namespace
}  // namespace qvl
