#include "model/random_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "base/bf16.h"
#include "base/error.h"
#include "base/mapped_file.h"
#include "model/model_folder.h"
#include "model/safetensors.h"
#include "model/scratch_folder.h"
#include "model/weights.h"

namespace qvl {
namespace {

RandomModelSummary WriteTiny(const std::string& out, uint64_t seed, DType dtype = DType::kBF16,
                             const std::string& config = kTinyModelDir + "/config.json",
                             const std::string& files_from = "") {
  ThreadPool pool(2, /*pin=*/false);
  RandomModelOptions o;
  o.config_path = config;
  o.output_dir = out;
  o.files_from = files_from;
  o.seed = seed;
  o.dtype = dtype;
  return WriteRandomModel(o, pool);
}

float ValueAt(const TensorInfo& t, int64_t i) {
  if (t.dtype == DType::kF32) {
    float v;
    std::memcpy(&v, t.data + 4 * i, 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, t.data + 2 * i, 2);
  return Bf16ToF32(h);
}

TEST(RandomNormal, HasStandardMoments) {
  double sum = 0, sum2 = 0, sum4 = 0, largest = 0;
  const int n = 1 << 20;
  for (int i = 0; i < n; ++i) {
    const double x = RandomNormal(42, static_cast<uint64_t>(i));
    sum += x;
    sum2 += x * x;
    sum4 += x * x * x * x;
    largest = std::max(largest, std::fabs(x));
  }
  EXPECT_NEAR(sum / n, 0.0, 0.005);
  EXPECT_NEAR(sum2 / n, 1.0, 0.01);
  EXPECT_NEAR(sum4 / n, 2.7, 0.05);  // sum of four uniforms: kurtosis 3 - 1.2 / 4
  EXPECT_LE(largest, kRandomNormalBound);
  EXPECT_NE(RandomNormal(1, 0), RandomNormal(2, 0));
  EXPECT_EQ(RandomNormal(7, 123), RandomNormal(7, 123));
}

TEST(RandomModel, TinyFolderLoadsWithRealLayoutAndScales) {
  ScratchFolder out("random_tiny");
  const RandomModelSummary s = WriteTiny(out.path(), 1);
  EXPECT_EQ(s.tensors, 121u);
  EXPECT_EQ(s.parameters, 10493440);

  const ModelFolder folder = OpenModelFolder(out.path());
  EXPECT_EQ(ReadFileToString(folder.config_path), ReadFileToString(kTinyModelDir + "/config.json"));
  EXPECT_EQ(ReadFileToString(folder.tokenizer_path),
            ReadFileToString(kTinyModelDir + "/tokenizer.json"));
  EXPECT_EQ(folder.chat_template_path, out.File("chat_template.json"));
  const TensorStore store = TensorStore::OpenFolder(out.path());
  const SafetensorsFile fixture(kTinyModelDir + "/model.safetensors");
  // Same names, shapes, dtype, order and header layout as the fixture checkpoint.
  EXPECT_EQ(store.files()[0]->mapped().size(), fixture.mapped().size());
  EXPECT_EQ(s.file_bytes, fixture.mapped().size());
  EXPECT_EQ(store.files()[0]->metadata(), fixture.metadata());
  ASSERT_EQ(store.All().size(), fixture.tensors().size());
  for (size_t i = 0; i < fixture.tensors().size(); ++i) {
    EXPECT_EQ(store.All()[i]->name, fixture.tensors()[i].name);
    EXPECT_EQ(store.All()[i]->shape, fixture.tensors()[i].shape);
    EXPECT_EQ(store.All()[i]->dtype, DType::kBF16);
  }
  MapQwen3VLWeights(store, folder.config);

  // Standardized values, pooled per role, must be close to N(0, 1).
  std::map<TensorRole, std::pair<double, double>> moments;  // sum z, sum z^2
  std::map<TensorRole, int64_t> counts;
  for (const ExpectedTensor& e : ExpectedQwen3VLTensors(folder.config)) {
    const TensorInfo& t = store.Require(e.name);
    double mean = 0, std = 1;
    switch (e.role) {
      case TensorRole::kMatrix:
        std = 1.0 / std::sqrt(static_cast<double>(t.numel() / t.shape[0]));
        break;
      case TensorRole::kEmbedding:
        std = 1.0 / std::sqrt(static_cast<double>(t.shape[1]));
        break;
      case TensorRole::kNormGain:
        mean = 1.0;
        std = 0.02;
        break;
      case TensorRole::kBias:
        std = 0.01;
        break;
    }
    for (int64_t i = 0; i < t.numel(); ++i) {
      const double z = (ValueAt(t, i) - mean) / std;
      ASSERT_LT(std::fabs(z), 3.6) << e.name << " " << i;
      moments[e.role].first += z;
      moments[e.role].second += z * z;
    }
    counts[e.role] += t.numel();
  }
  for (const auto& [role, m] : moments) {
    const double n = static_cast<double>(counts[role]);
    EXPECT_NEAR(m.first / n, 0.0, 0.05) << static_cast<int>(role);
    EXPECT_NEAR(m.second / n, 1.0, 0.05) << static_cast<int>(role);
  }
}

TEST(RandomModel, SameSeedSameBytes) {
  ScratchFolder a("random_seed_a"), b("random_seed_b"), c("random_seed_c");
  WriteTiny(a.path(), 7);
  WriteTiny(b.path(), 7);
  WriteTiny(c.path(), 8);
  const MappedFile fa(a.File("model.safetensors"));
  const MappedFile fb(b.File("model.safetensors"));
  const MappedFile fc(c.File("model.safetensors"));
  ASSERT_EQ(fa.size(), fb.size());
  ASSERT_EQ(fa.size(), fc.size());
  EXPECT_EQ(std::memcmp(fa.data(), fb.data(), fa.size()), 0);
  EXPECT_NE(std::memcmp(fa.data(), fc.data(), fa.size()), 0);
}

TEST(RandomModel, F32WeightsAndGeneratedCompanions) {
  ScratchFolder source("random_source"), tokenizer("random_tokenizer"), out("random_f32");
  source.Write("config.json", ReadFileToString(kTinyModelDir + "/config.json"));
  tokenizer.LinkTinyModel({"chat_template.json", "config.json", "generation_config.json",
                           "model.safetensors", "preprocessor_config.json",
                           "video_preprocessor_config.json"});
  WriteTiny(out.path(), 3, DType::kF32, source.File("config.json"), tokenizer.path());

  const ModelFolder folder = OpenModelFolder(out.path());
  EXPECT_EQ(folder.chat_template_path, out.File("tokenizer_config.json"));
  EXPECT_EQ(folder.generation.top_k, 20);
  EXPECT_EQ(folder.generation.eos_token_ids, (std::vector<int32_t>{151645, 151643}));
  EXPECT_NE(ReadFileToString(folder.preprocessor_config_path).find("\"shortest_edge\": 65536"),
            std::string::npos);
  // The real model's video settings, with its budget over all frames.
  const nlohmann::json video =
      nlohmann::json::parse(ReadFileToString(out.File("video_preprocessor_config.json")));
  EXPECT_EQ(video["size"]["longest_edge"], 25165824);
  EXPECT_EQ(video["size"]["shortest_edge"], 4096);
  EXPECT_EQ(video["patch_size"], 16);
  EXPECT_EQ(video["temporal_patch_size"], 2);
  EXPECT_EQ(video["merge_size"], 2);
  EXPECT_EQ(video["fps"], 2);
  EXPECT_EQ(video["min_frames"], 4);
  EXPECT_EQ(video["max_frames"], 768);
  const TensorStore store = TensorStore::OpenFolder(out.path());
  EXPECT_EQ(store.Require("model.visual.pos_embed.weight").dtype, DType::kF32);
  EXPECT_EQ(store.total_bytes(), 4u * 10493440);
  const Qwen3VLWeights w = MapQwen3VLWeights(store, folder.config);
  ASSERT_EQ(w.text.layers[0].q_norm.size(), 32u);
  for (float g : w.text.layers[0].q_norm) EXPECT_NEAR(g, 1.0f, 0.08f);
}

// --dtype fp8: Qwen's -FP8 layout, whose decoded Linear weights keep the plan's spread.
TEST(RandomModel, Fp8CheckpointInQwensLayout) {
  ScratchFolder out("random_fp8");
  const RandomModelSummary s = WriteTiny(out.path(), 5, DType::kF8E4M3);
  EXPECT_EQ(s.tensors, 121u + 52u);  // and a scale tensor per Linear weight
  EXPECT_EQ(s.parameters, 10493440);
  const ModelFolder folder = OpenModelFolder(out.path());
  EXPECT_EQ(folder.config.weight_quant.block_rows, 128);
  EXPECT_EQ(folder.config.weight_quant.block_cols, 128);
  const TensorStore store = TensorStore::OpenFolder(out.path());
  EXPECT_EQ(store.Require("model.visual.pos_embed.weight").dtype, DType::kBF16);
  EXPECT_EQ(store.Require("model.language_model.embed_tokens.weight").dtype, DType::kBF16);
  const TensorInfo& scale =
      store.Require("model.language_model.layers.0.mlp.down_proj.weight_scale_inv");
  EXPECT_EQ(scale.dtype, DType::kF32);
  EXPECT_EQ(scale.shape, (std::vector<int64_t>{1, 1}));
  const Qwen3VLWeights w = MapQwen3VLWeights(store, folder.config);
  const WeightView& down = w.text.layers[0].down_proj;  // [64, 128]
  ASSERT_EQ(down.dtype, DType::kF8E4M3);
  double sum2 = 0;
  std::vector<float> row(128);
  for (int64_t r = 0; r < 64; ++r) {
    DecodeWeightRow(down, r, 128, row.data());
    for (float v : row) sum2 += double(v) * v;
  }
  EXPECT_NEAR(std::sqrt(sum2 / (64 * 128)), 1.0 / std::sqrt(128.0), 0.05 / std::sqrt(128.0));
}

TEST(RandomModel, MissingTokenizerIsNamedBeforeWritingWeights) {
  ScratchFolder source("random_no_tokenizer"), out("random_no_tokenizer_out");
  source.Write("config.json", ReadFileToString(kTinyModelDir + "/config.json"));
  try {
    WriteTiny(out.path(), 0, DType::kBF16, source.File("config.json"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_EQ(std::string(e.what()), "tokenizer.json is not in " + source.path() +
                                         "; name a folder holding the Qwen3-VL tokenizer files");
  }
  EXPECT_FALSE(std::filesystem::exists(out.File("model.safetensors")));
}

// -o naming a real model's folder replaced its weights with random ones, and a mistyped
// --tokenizer-from quietly took the config's folder's files.
TEST(RandomModel, NeverOverwritesWeightsAndRefusesAMissingFilesFolder) {
  ScratchFolder out("random_existing");
  WriteTiny(out.path(), 1);
  const std::string before = ReadFileToString(out.File("model.safetensors"));
  try {
    WriteTiny(out.path(), 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()),
              out.File("model.safetensors") +
                  " already exists; make-random never overwrites weights: choose another folder");
  }
  EXPECT_EQ(ReadFileToString(out.File("model.safetensors")), before);

  ScratchFolder fresh("random_no_files_from");
  try {
    WriteTiny(fresh.path(), 0, DType::kBF16, kTinyModelDir + "/config.json", "/nonexistent/tok");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_EQ(std::string(e.what()),
              "/nonexistent/tok: no such folder (to copy the tokenizer and the other companion "
              "files from)");
  }
  EXPECT_FALSE(std::filesystem::exists(fresh.File("config.json")));
}

}  // namespace
}  // namespace qvl
