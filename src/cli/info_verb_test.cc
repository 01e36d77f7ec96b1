// Runs `qvl info` on the fixture model and on broken folders.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "cli/qvl_runner.h"
#include "model/scratch_folder.h"

namespace qvl::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(InfoVerb, DescribesTheTinyModel) {
  const QvlRun r = RunQvl("info -m " + kTinyModelDir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("model: " + kTinyModelDir + " (qwen3_vl), valid\n"));
  EXPECT_THAT(r.out, HasSubstr("  vision tower                           51          241,472"
                               "          482,944  BF16\n"));
  EXPECT_THAT(r.out, HasSubstr("  mergers (main + deepstack)             24          330,624"
                               "          661,248  BF16\n"));
  EXPECT_THAT(r.out, HasSubstr("  total                                 121       10,493,440"
                               "       20,986,880  BF16\n"));
  EXPECT_THAT(r.out, HasSubstr("text decoder: 4 layers, hidden 64, 4 heads / 2 KV heads x "
                               "head_dim 32, MLP 128, vocab 151936, tied embeddings\n"));
  EXPECT_THAT(r.out, HasSubstr("context length: 262,144 tokens (max_position_embeddings)\n"));
  EXPECT_THAT(r.out, HasSubstr("position grid 12x12, deepstack taps [0, 2, 3] -> 64\n"));
  EXPECT_THAT(r.out, HasSubstr("\ncpu: "));
  EXPECT_THAT(r.out, HasSubstr("\nkernel tier: "));
  EXPECT_EQ(r.err, "");
}

TEST(InfoVerb, JsonOutput) {
  const QvlRun r = RunQvl("info --json -m " + kTinyModelDir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["parts"]["total"]["tensors"], 121);
  EXPECT_EQ(j["parts"]["total"]["parameters"], 10493440);
  EXPECT_EQ(j["parts"]["text"]["bytes"], 19842688);
  EXPECT_EQ(j["text"]["context_length"], 262144);
  EXPECT_EQ(j["vision"]["position_grid"], 12);
  EXPECT_EQ(j["tokens"]["eos"], nlohmann::json({151645, 151643}));
  EXPECT_EQ(j["files"]["chat_template"], "chat_template.json");
  EXPECT_FALSE(j["kernel_tier"].get<std::string>().empty());
}

TEST(InfoVerb, ProbeMeasuresBandwidthAndTheTiersComputePeak) {
  const QvlRun r = RunQvl("info --probe --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["memory_bandwidth_gb_s"].get<double>(), 0.0);
  const std::string unit = j["compute_peak"]["unit"];
  if (unit.empty()) GTEST_SKIP() << "no compute probe on the scalar, avx512 and NEON tiers";
  EXPECT_GT(j["compute_peak"]["int8_tops"].get<double>(), 0.0);
  EXPECT_GT(j["compute_peak"]["bf16_tflops"].get<double>(), 0.0);
}

TEST(InfoVerb, WithoutAModelDescribesTheCpu) {
  const QvlRun r = RunQvl("info");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, StartsWith("cpu: "));
  EXPECT_THAT(r.out, HasSubstr("\nkernel tier: "));
}

TEST(InfoVerb, MissingFileIsOneErrorLine) {
  ScratchFolder dir("info_missing");
  dir.LinkTinyModel({"tokenizer.json"});
  const QvlRun r = RunQvl("info -m " + dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "qvl: error: " + dir.path() +
                       ": tokenizer.json is missing (the tokenizer vocabulary and merges)\n");
}

TEST(InfoVerb, TruncatedWeightsAreOneErrorLine) {
  ScratchFolder dir("info_truncated");
  dir.LinkTinyModel({"model.safetensors"});
  const std::string weights = ReadFileToString(kTinyModelDir + "/model.safetensors");
  dir.Write("model.safetensors", weights.substr(0, weights.size() - 1000));
  const QvlRun r = RunQvl("info -m " + dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: " + dir.File("model.safetensors") +
                       ": tensor model.visual.pos_embed.weight: data_offsets [20968448, 20986880] "
                       "point past the end of the file (the data section has 20985880 bytes; "
                       "truncated?)\n");
}

}  // namespace
}  // namespace qvl::cli
