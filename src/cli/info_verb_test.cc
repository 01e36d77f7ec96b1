// Runs `qvl info` on the fixture model and on broken folders.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "base/mapped_file.h"
#include "cli/qvl_runner.h"
#include "model/quantized_folder_for_test.h"
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

TEST(InfoVerb, DescribesAnFp8Checkpoint) {
  const ScratchFolder root("info_fp8");
  WriteQuantizedFolder(kTinyModelDir, root.File("m"), TestQuantScheme::QwenFp8(32, 32),
                       /*dequantized=*/false);
  const QvlRun r = RunQvl("info -m " + root.File("m"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The vision blocks' 131,072 Linear weights take a byte each, the rest two.
  EXPECT_THAT(r.out, HasSubstr("  vision tower                           51          241,472"
                               "          351,872  BF16+F8_E4M3\n"));
  EXPECT_THAT(r.out, HasSubstr("fp8 checkpoint: 52 of 52 Linear weights as fp8 e4m3 codes, a "
                               "scale per 32x32 block; decoded to the format --dtype asks for\n"));
  const QvlRun j = RunQvl("info --json -m " + root.File("m"));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["quantized"],
            nlohmann::json({{"method", "fp8"},
                            {"weights", 52},
                            {"linear_layers", 52},
                            {"codes", "fp8 e4m3"},
                            {"scale_per", "32x32 block"}}));
}

// llm-compressor's W4A16 with zero points, its deepstack mergers left unquantized: the
// packed words are counted as the weights they hold.
TEST(InfoVerb, DescribesACompressedTensorsCheckpoint) {
  const ScratchFolder root("info_w4a16");
  WriteQuantizedFolder(kTinyModelDir, root.File("m"),
                       TestQuantScheme::Compressed(DType::kI32, 4, false, 1, 32, DType::kBF16),
                       /*dequantized=*/false);
  const QvlRun r = RunQvl("info -m " + root.File("m"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("compressed-tensors checkpoint: 46 of 52 Linear weights as int4 "
                               "with zero points codes, a scale per group of 32; decoded to the "
                               "format --dtype asks for\n"));
  const QvlRun j = RunQvl("info --json -m " + root.File("m"));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const nlohmann::json info = nlohmann::json::parse(j.out);
  EXPECT_EQ(info["parts"]["total"]["parameters"], 10493440);
  EXPECT_EQ(info["parts"]["vision"]["dtype"], "BF16+I32");
}

// bitsandbytes' nf4 as unsloth's -bnb-4bit: the block size comes from the weights'
// quant_state.
TEST(InfoVerb, DescribesABitsAndBytesCheckpoint) {
  const ScratchFolder root("info_bnb");
  WriteQuantizedFolder(kTinyModelDir, root.File("m"),
                       TestQuantScheme::BitsAndBytes4(FourBitType::kNf4, 64, true, DType::kBF16),
                       /*dequantized=*/false);
  const QvlRun r = RunQvl("info -m " + root.File("m"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("bitsandbytes checkpoint: 46 of 52 Linear weights as nf4 codes, a "
                               "scale per block of 64 values (double-quantized); decoded to the "
                               "format --dtype asks for\n"));
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

// As serve and run, info and tokenize take ORG/NAME from the Hugging Face cache (they
// read a path named "Qwen/Qwen3-VL-2B-Instruct" in the current folder before); one not
// cached names `qvl pull`, never downloads.
TEST(InfoVerb, InfoAndTokenizeFindOrgSlashNameInTheCache) {
  ScratchFolder cache("info_cache");
  const std::string repo = cache.File("models--Qwen--Qwen3-VL-2B-Instruct");
  const std::string commit = "0123456789abcdef0123456789abcdef01234567";
  std::filesystem::create_directories(repo + "/snapshots/" + commit);
  std::filesystem::create_directories(repo + "/refs");
  cache.Write("models--Qwen--Qwen3-VL-2B-Instruct/refs/main", commit);
  for (const auto& entry : std::filesystem::directory_iterator(kTinyModelDir)) {
    std::filesystem::create_symlink(
        entry.path(), repo + "/snapshots/" + commit + "/" + entry.path().filename().string());
  }
  const std::string env = "env -u HF_HUB_OFFLINE HF_HUB_CACHE=" + cache.path() + " ";
  QvlRun r = RunQvl("info -m Qwen/Qwen3-VL-2B-Instruct", env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("model: " + repo + "/snapshots/" + commit + " (qwen3_vl), valid"));
  r = RunQvl("tokenize -m Qwen/Qwen3-VL-2B-Instruct < /dev/null", env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[]\n");
  for (const std::string verb : {"info", "tokenize"}) {
    r = RunQvl(verb + " -m Qwen/Not-Here < /dev/null", env);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "qvl: error: model Qwen/Not-Here is not in the Hugging Face cache at " +
                         cache.path() + " and downloads are off (qvl " + verb +
                         " never downloads): run `qvl pull Qwen/Not-Here` first, or pass a model "
                         "folder\n");
  }
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

// A preprocessor that cut patches of another size than the vision tower's weights was
// "valid" here, and `qvl run` overflowed a buffer with it (a video with
// temporal_patch_size 1) or answered about a wrongly gridded image.
TEST(InfoVerb, PreprocessorSettingsMustAgreeWithTheVisionConfig) {
  struct Case {
    std::string file, field;
    int value;
    std::string vision_field;
    int expected;
  };
  for (const Case& c : {
           Case{"preprocessor_config.json", "patch_size", 14, "patch_size", 16},
           Case{"preprocessor_config.json", "merge_size", 4, "spatial_merge_size", 2},
           Case{"video_preprocessor_config.json", "temporal_patch_size", 1, "temporal_patch_size",
                2},
           Case{"video_preprocessor_config.json", "patch_size", 14, "patch_size", 16},
       }) {
    SCOPED_TRACE(c.file + " " + c.field);
    ScratchFolder dir("info_preprocessor");
    dir.LinkTinyModel({c.file});
    nlohmann::json json = nlohmann::json::parse(ReadFileToString(kTinyModelDir + "/" + c.file));
    json[c.field] = c.value;
    dir.Write(c.file, json.dump());
    const std::string error = "qvl: error: " + dir.File(c.file) + ": " + c.field + " is " +
                              std::to_string(c.value) + ", but " + dir.File("config.json") +
                              " has vision_config." + c.vision_field + " " +
                              std::to_string(c.expected) + "; they must agree\n";
    const QvlRun r = RunQvl("info -m " + dir.path());
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, error);
  }
}

// A tokenizer without a token the chat template writes tokenized it as text: `qvl run`
// answered a garbled prompt, and the server refused image requests as the client's fault.
TEST(InfoVerb, TheTokenizerMustHaveEveryTemplateToken) {
  ScratchFolder dir("info_tokenizer");
  dir.LinkTinyModel({"tokenizer.json"});
  nlohmann::json json = nlohmann::json::parse(ReadFileToString(kTinyModelDir + "/tokenizer.json"));
  nlohmann::json& added = json["added_tokens"];
  for (size_t i = 0; i < added.size(); ++i) {
    if (added[i]["content"] == "<|image_pad|>") added.erase(i);
  }
  dir.Write("tokenizer.json", json.dump());
  const QvlRun r = RunQvl("info -m " + dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: " + dir.File("tokenizer.json") +
                       ": the added token <|image_pad|> is missing (the Qwen3-VL chat template "
                       "writes it)\n");
}

// A folder qvl may not read is named as such, not as one missing config.json.
TEST(InfoVerb, AnUnreadableFolderSaysPermissionDenied) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads every folder";
  ScratchFolder dir("info_unreadable");
  dir.LinkTinyModel();
  ASSERT_EQ(::chmod(dir.path().c_str(), 0), 0);
  const QvlRun r = RunQvl("info -m " + dir.path());
  ::chmod(dir.path().c_str(), 0700);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: cannot read " + dir.File("config.json") + ": Permission denied\n");
}

}  // namespace
}  // namespace qvl::cli
