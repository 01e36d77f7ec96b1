#include "model/weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/bf16.h"
#include "base/error.h"
#include "model/broken_weights_for_test.h"
#include "model/scratch_folder.h"

namespace qvl {
namespace {

const std::string k2BConfig = std::string(QVL_TEST_DATA) + "/qwen3vl-2b-config/config.json";
const std::string k2BTensors = std::string(QVL_TEST_DATA) + "/qwen3vl-2b-tensors.txt";

struct ListedTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
};

// qwen3vl-2b-tensors.txt: "name<TAB>dtype<TAB>[d0, d1, ...]", '#' lines are comments.
std::vector<ListedTensor> Read2BList() {
  std::ifstream in(k2BTensors);
  std::vector<ListedTensor> list;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    ListedTensor t;
    std::istringstream fields(line);
    std::string shape;
    std::getline(fields, t.name, '\t');
    std::getline(fields, t.dtype, '\t');
    std::getline(fields, shape);
    std::istringstream dims(shape.substr(1, shape.size() - 2));
    std::string dim;
    while (std::getline(dims, dim, ',')) t.shape.push_back(std::stoll(dim));
    list.push_back(t);
  }
  return list;
}

TEST(ExpectedTensors, MatchThe2BCheckpointExactly) {
  const std::vector<ListedTensor> listed = Read2BList();
  const std::vector<ExpectedTensor> expected = ExpectedQwen3VLTensors(LoadModelConfig(k2BConfig));
  ASSERT_EQ(listed.size(), 625u);
  ASSERT_EQ(expected.size(), listed.size());
  int64_t parameters = 0;
  std::map<std::string, int> parts;
  std::vector<TensorSpec> specs;
  for (size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(expected[i].name, listed[i].name) << i;
    EXPECT_EQ(expected[i].shape, listed[i].shape) << listed[i].name;
    EXPECT_EQ(listed[i].dtype, "BF16");
    parameters += expected[i].numel();
    parts[expected[i].part]++;
    specs.push_back({expected[i].name, DType::kBF16, expected[i].shape});
  }
  EXPECT_EQ(parameters, 2127532032);
  EXPECT_EQ(parts["vision"] + parts["merger"], 315);
  EXPECT_EQ(parts["merger"], 24);
  EXPECT_EQ(parts["text"], 310);
  // The real file is 8 + 76,240 + 4,255,064,064 bytes: the same header layout.
  EXPECT_EQ(EncodeSafetensorsHeader(specs, {{"format", "pt"}}).size(), 76240u);
  EXPECT_EQ(parameters * 2, 4255064064);
}

TEST(ExpectedTensors, RolesFollowTheNames) {
  for (const ExpectedTensor& t : ExpectedQwen3VLTensors(LoadModelConfig(k2BConfig))) {
    const bool bias = t.name.size() > 5 && t.name.compare(t.name.size() - 5, 5, ".bias") == 0;
    const bool embedding = t.name.find("embed_tokens") != std::string::npos ||
                           t.name.find("pos_embed") != std::string::npos;
    const bool norm = !bias && t.name.find("norm") != std::string::npos;
    const TensorRole role = bias        ? TensorRole::kBias
                            : embedding ? TensorRole::kEmbedding
                            : norm      ? TensorRole::kNormGain
                                        : TensorRole::kMatrix;
    EXPECT_EQ(static_cast<int>(t.role), static_cast<int>(role)) << t.name;
  }
}

TEST(ExpectedTensors, MatchTheTinyFixture) {
  const ModelConfig config = LoadModelConfig(kTinyModelDir + "/config.json");
  const SafetensorsFile file(kTinyModelDir + "/model.safetensors");
  const std::vector<ExpectedTensor> expected = ExpectedQwen3VLTensors(config);
  ASSERT_EQ(expected.size(), file.tensors().size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(expected[i].name, file.tensors()[i].name);  // file order is name order
    EXPECT_EQ(expected[i].shape, file.tensors()[i].shape) << expected[i].name;
  }
  ModelConfig untied = config;
  untied.tie_word_embeddings = false;
  const std::vector<ExpectedTensor> with_head = ExpectedQwen3VLTensors(untied);
  ASSERT_EQ(with_head.size(), expected.size() + 1);
  EXPECT_EQ(with_head.front().name, "lm_head.weight");
  EXPECT_EQ(with_head.front().shape, (std::vector<int64_t>{151936, 64}));
}

TEST(MapWeights, MapsTheTinyFixture) {
  const ModelConfig config = LoadModelConfig(kTinyModelDir + "/config.json");
  const TensorStore store = TensorStore::OpenFolder(kTinyModelDir);
  const Qwen3VLWeights w = MapQwen3VLWeights(store, config);
  const VisionWeights& v = w.vision;
  EXPECT_EQ(v.patch_embed.rows, 64);
  EXPECT_EQ(v.patch_embed.cols, 1536);
  EXPECT_EQ(v.patch_embed.dtype, DType::kBF16);
  EXPECT_EQ(v.pos_embed.rows, 144);
  ASSERT_EQ(v.blocks.size(), 4u);
  EXPECT_EQ(v.blocks[3].qkv.rows, 192);
  EXPECT_EQ(v.blocks[3].qkv_b.size(), 192u);
  EXPECT_EQ(v.blocks[0].fc1.rows, 128);
  EXPECT_EQ(v.blocks[0].fc2.cols, 128);
  EXPECT_EQ(v.merger.norm_w.size(), 64u);
  EXPECT_EQ(v.merger.fc1.rows, 256);
  EXPECT_EQ(v.merger.fc2.rows, 64);
  ASSERT_EQ(v.deepstack_mergers.size(), 3u);
  EXPECT_EQ(v.deepstack_mergers[2].norm_b.size(), 256u);
  const TextWeights& t = w.text;
  ASSERT_EQ(t.layers.size(), 4u);
  EXPECT_EQ(t.layers[1].q_proj.rows, 128);
  EXPECT_EQ(t.layers[1].q_proj.cols, 64);
  EXPECT_EQ(t.layers[1].k_proj.rows, 64);
  EXPECT_EQ(t.layers[1].o_proj.cols, 128);
  EXPECT_EQ(t.layers[1].q_norm.size(), 32u);
  EXPECT_EQ(t.layers[1].down_proj.cols, 128);
  EXPECT_EQ(t.norm.size(), 64u);
  EXPECT_EQ(t.embed_tokens.rows, 151936);
  EXPECT_EQ(t.lm_head.data, t.embed_tokens.data);  // tied

  const TensorInfo& norm = store.Require("model.language_model.layers.2.input_layernorm.weight");
  uint16_t last;
  std::memcpy(&last, norm.data + 2 * 63, 2);
  EXPECT_EQ(t.layers[2].input_norm[63], Bf16ToF32(last));
  EXPECT_EQ(t.layers[2].q_proj.data, store
                                         .Require("model.language_model.layers.2.self_attn."
                                                  "q_proj.weight")
                                         .data);
}

TEST_F(BrokenWeights, WrongShape) {
  TensorData* t = FindTensor(tensors_, "model.language_model.layers.3.mlp.up_proj.weight");
  t->spec.shape = {128, 63};
  t->bytes.resize(128 * 63 * 2);
  EXPECT_EQ(MapError(), path_ +
                            ": tensor model.language_model.layers.3.mlp.up_proj.weight has "
                            "shape [128, 63], expected [128, 64]");
}

TEST_F(BrokenWeights, MissingTensors) {
  Erase(tensors_, "model.visual.blocks.2.attn.qkv.bias");
  EXPECT_EQ(MapError(), path_ + ": tensor model.visual.blocks.2.attn.qkv.bias is missing");
  Erase(tensors_, "model.visual.pos_embed.weight");
  Erase(tensors_, "model.language_model.norm.weight");
  EXPECT_EQ(MapError(), path_ +
                            ": tensor model.language_model.norm.weight is missing (and 2 "
                            "more; is this a Qwen3-VL checkpoint matching config.json?)");
}

TEST_F(BrokenWeights, UnsupportedDtype) {
  FindTensor(tensors_, "model.visual.merger.norm.weight")->spec.dtype = DType::kI16;
  EXPECT_EQ(MapError(), path_ +
                            ": tensor model.visual.merger.norm.weight has dtype I16; qvl "
                            "reads F32, BF16 or F16 weights (quantized ones as config.json's "
                            "quantization_config describes)");
}

// up_proj [128, 64] as F8_E4M3 codes 0..255 in turn, with 32 x 48 blocks: 4 x 2 scales,
// the last block column 16 wide.
class Fp8Weights : public BrokenWeights {
 protected:
  static constexpr char kUp[] = "model.language_model.layers.3.mlp.up_proj.weight";
  static constexpr char kScale[] = "model.language_model.layers.3.mlp.up_proj.weight_scale_inv";

  static WeightQuantization Blocks(int rows, int cols) {
    return {.method = WeightQuantization::Method::kFp8, .block_rows = rows, .block_cols = cols};
  }

  Fp8Weights() {
    config_.weight_quant = Blocks(32, 48);
    TensorData* t = FindTensor(tensors_, kUp);
    t->spec.dtype = DType::kF8E4M3;
    t->bytes.resize(128 * 64);
    for (size_t i = 0; i < t->bytes.size(); ++i) t->bytes[i] = static_cast<uint8_t>(i % 251);
    TensorData scale{{kScale, DType::kF32, {4, 2}}, std::vector<uint8_t>(8 * 4)};
    for (int i = 0; i < 8; ++i) {
      const float v = 0.5f + 0.25f * static_cast<float>(i);
      std::memcpy(scale.bytes.data() + 4 * i, &v, 4);
    }
    tensors_.push_back(scale);
  }
};

TEST_F(Fp8Weights, MapsWeightWithItsBlockScales) {
  ASSERT_EQ(MapError(), "");
  const TensorStore store({path_});
  const Qwen3VLWeights w = MapQwen3VLWeights(store, config_);
  const WeightView& up = w.text.layers[3].up_proj;
  ASSERT_EQ(up.dtype, DType::kF8E4M3);
  ASSERT_NE(up.block_scales, nullptr);
  EXPECT_EQ(up.block_rows, 32);
  EXPECT_EQ(up.block_cols, 48);
  // The scales travel with the view, so the copy the model keeps still decodes.
  const Qwen3VLWeights kept = w;
  for (int64_t row : {0, 31, 32, 127}) {
    std::vector<float> decoded(64);
    DecodeWeightRow(kept.text.layers[3].up_proj, row, 64, decoded.data());
    for (int64_t c = 0; c < 64; ++c) {
      const uint8_t code = static_cast<uint8_t>((row * 64 + c) % 251);
      const float scale = 0.5f + 0.25f * static_cast<float>((row / 32) * 2 + c / 48);
      const float want = F8E4M3ToF32(code) * scale;
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(decoded[c])) << row << "," << c;
      } else {
        EXPECT_EQ(decoded[c], want) << row << "," << c;
      }
    }
  }
  // Other layers' weights are untouched BF16 without scales.
  EXPECT_EQ(w.text.layers[2].up_proj.dtype, DType::kBF16);
  EXPECT_EQ(w.text.layers[2].up_proj.block_scales, nullptr);
}

TEST_F(Fp8Weights, RefusesWhatItCannotDecode) {
  config_.weight_quant = {};
  EXPECT_EQ(MapError(), path_ + ": tensor " + kUp +
                            " has dtype F8_E4M3, but config.json has no quantization_config "
                            "saying how its codes are scaled");
  config_.weight_quant = Blocks(32, 16);
  EXPECT_EQ(MapError(), path_ + ": tensor " + kScale +
                            " has shape [4, 2], expected [4, 4] (one scale per 32x16 block of " +
                            kUp + ", as config.json's quantization_config says)");
  config_.weight_quant = Blocks(64, 48);
  EXPECT_EQ(MapError(), path_ + ": tensor " + kScale +
                            " has shape [4, 2], expected [2, 2] (one scale per 64x48 block of " +
                            kUp + ", as config.json's quantization_config says)");
  config_.weight_quant = Blocks(32, 48);
  config_.weight_quant.codes = DType::kI8;
  EXPECT_EQ(MapError(), path_ + ": tensor " + kUp +
                            " has dtype F8_E4M3, but config.json's quantization_config describes "
                            "int8 codes");
  config_.weight_quant = Blocks(32, 48);
  const float nan = std::nanf("");
  std::memcpy(FindTensor(tensors_, kScale)->bytes.data() + 12, &nan, 4);
  EXPECT_EQ(MapError(), path_ + ": tensor " + kScale +
                            " holds nan; the scales of quantized weights must be finite");
  TensorData* norm = FindTensor(tensors_, "model.language_model.norm.weight");
  const TensorData bf16_norm = *norm;
  norm->spec.dtype = DType::kF8E4M3;
  norm->bytes.resize(norm->bytes.size() / 2);
  EXPECT_EQ(MapError(), path_ +
                            ": tensor model.language_model.norm.weight has dtype F8_E4M3; qvl "
                            "reads quantized codes only for the weights of Linear layers");
  *norm = bf16_norm;
  Erase(tensors_, kScale);
  EXPECT_EQ(MapError(), path_ + ": tensor " + kScale + " is missing");
}

TEST_F(BrokenWeights, UntiedModelNeedsLmHead) {
  config_.tie_word_embeddings = false;
  EXPECT_EQ(MapError(), path_ + ": tensor lm_head.weight is missing");
  TensorData head = *FindTensor(tensors_, "model.language_model.embed_tokens.weight");
  head.spec.name = "lm_head.weight";
  tensors_.push_back(head);
  EXPECT_EQ(MapError(), "");
  const TensorStore store({path_});
  const Qwen3VLWeights w = MapQwen3VLWeights(store, config_);
  EXPECT_EQ(w.text.lm_head.data, store.Require("lm_head.weight").data);
  EXPECT_NE(w.text.lm_head.data, w.text.embed_tokens.data);
}

TEST_F(BrokenWeights, ExtraTensorsOnlyWarn) {
  tensors_.push_back({{"model.visual.extra.weight", DType::kBF16, {2}}, {0, 0, 0, 0}});
  tensors_.push_back({{"mtp.head.weight", DType::kBF16, {1}}, {0, 0}});
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(MapError(), "");
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find(path_ + ": 2 tensor(s) not used by Qwen3-VL are ignored (first: "),
            std::string::npos)
      << log;
}

TEST_F(BrokenWeights, ReadsF32AndF16Weights) {
  TensorData* norm = FindTensor(tensors_, "model.language_model.norm.weight");
  TensorData* qkv_b = FindTensor(tensors_, "model.visual.blocks.0.attn.qkv.bias");
  std::vector<uint8_t> f32(64 * 4), f16(192 * 2);
  for (size_t i = 0; i < 64; ++i) {
    const float v = 1.0f + 0.25f * static_cast<float>(i);
    std::memcpy(&f32[4 * i], &v, 4);
  }
  for (size_t i = 0; i < 192; ++i) {
    const uint16_t h = F32ToF16(-0.5f * static_cast<float>(i));
    std::memcpy(&f16[2 * i], &h, 2);
  }
  *norm = {{norm->spec.name, DType::kF32, {64}}, f32};
  *qkv_b = {{qkv_b->spec.name, DType::kF16, {192}}, f16};
  FindTensor(tensors_, "model.visual.blocks.1.attn.proj.weight")->spec.dtype = DType::kF16;
  ASSERT_EQ(MapError(), "");
  const TensorStore store({path_});
  const Qwen3VLWeights w = MapQwen3VLWeights(store, config_);
  EXPECT_EQ(w.text.norm[63], 1.0f + 0.25f * 63);
  EXPECT_EQ(w.vision.blocks[0].qkv_b[191], -0.5f * 191);
  EXPECT_EQ(w.vision.blocks[1].proj.dtype, DType::kF16);
}

}  // namespace
}  // namespace qvl
