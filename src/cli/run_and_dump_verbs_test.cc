// `qvl dump` and `qvl run` end to end on the fixture model: the dump of every fixture
// request equals the reference's golden tensors (the whole pipeline: template, tokenizer,
// image preprocessing, both towers), and `qvl run` prints the reference's greedy answer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/mapped_file.h"
#include "cli/qvl_runner.h"
#include "golden_tensors.h"
#include "model/quantized_folder_for_test.h"
#include "model/safetensors.h"
#include "model/scratch_folder.h"

namespace qvl::cli {
namespace {

const std::string kData = QVL_TEST_DATA;
const std::string kModel = kData + "/tiny-qwen3vl/model";

std::vector<std::string> Cases() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(kData + "/tiny-qwen3vl/cases")) {
    names.push_back(e.path().filename());
  }
  std::sort(names.begin(), names.end());
  return names;
}

RawTensor RawOf(const TensorInfo& t) {
  return {std::string(DTypeName(t.dtype)), t.shape, {t.data, t.nbytes}};
}

class DumpCase : public ::testing::TestWithParam<std::string> {};

TEST_P(DumpCase, EveryTensorMatchesTheReference) {
  const std::string dir = kData + "/tiny-qwen3vl/cases/" + GetParam();
  const std::string out =
      std::string(::testing::TempDir()) + "/dump_" + GetParam() + ".safetensors";
  const QvlRun run =
      RunQvl("dump -m " + kModel + " --dtype f32 --weight-cache none --request " + dir +
             "/request.json --out " + out + " --teacher " + dir + "/tensors.safetensors");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const GoldenTensors golden(dir);
  const SafetensorsFile dump(out);
  for (const std::string& name : golden.TensorNames()) {
    const TensorInfo* got = dump.Find(name);
    ASSERT_NE(got, nullptr) << name << " missing from the dump";
    double tolerance = 1e-3;  // float32 engine vs float32 reference
    if (got->dtype == DType::kI64) tolerance = 0;
    if (name == "pixel_values" || name == "pixel_values_videos") tolerance = 1e-6;
    EXPECT_EQ(golden.Mismatch(name, RawOf(*got), tolerance), "");
  }
  std::filesystem::remove(out);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DumpCase, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param; });

TEST(RunVerb, PrintsTheReferenceGreedyAnswer) {
  const std::string dir = kData + "/tiny-qwen3vl/cases/02_one_image_jpeg";
  const nlohmann::json meta = nlohmann::json::parse(ReadFileToString(dir + "/meta.json"));
  const QvlRun run = RunQvl("run -m " + kModel + " --dtype f32 --weight-cache none -q --request " +
                            dir + "/request.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, meta["greedy_text"].get<std::string>() + "\n");
}

// -v takes a video file like -i an image: the lossless MP4 of case 07 with its question
// gives the reference's answer to the frames.
TEST(RunVerb, VideoFileGivesTheReferenceAnswer) {
  const std::string dir = kData + "/tiny-qwen3vl/cases/07_video_frames";
  const nlohmann::json meta = nlohmann::json::parse(ReadFileToString(dir + "/meta.json"));
  const QvlRun run = RunQvl("run -m " + kModel + " --dtype f32 --weight-cache none -q -v " + dir +
                            "/frames/clip.mp4 --temperature 0 -n 16 'What moves in this video?'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, meta["greedy_text"].get<std::string>() + "\n");
}

// Without -q the timings follow the answer on stderr, one line per image and video.
TEST(RunVerb, PrintsTimingsPerImageAndVideo) {
  const std::string dir = kData + "/tiny-qwen3vl/cases/08_video_and_image";
  const QvlRun run =
      RunQvl("run -m " + kModel + " --dtype f32 --weight-cache none -i " + dir +
             "/images/still.png -v " + dir + "/frames/pan.mp4 --temperature 0 -n 2 'Same place?'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find(" tokens (70 image, 144 video) | "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("[image 1: 300x220 -> 320x224, 70 tokens | decode "), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("[video 1: 5 frames at 1 fps, 5 decoded, 5 sampled, 256x200 -> 256x192, "
                         "grid 3x12x16, 144 tokens | decode "),
            std::string::npos)
      << run.err;
}

TEST(RunVerb, JsonGivesAnOpenAIResponseWithUsageAndTimings) {
  const std::string image = kData + "/tiny-qwen3vl/cases/02_one_image_jpeg/images/photo.jpg";
  const QvlRun run = RunQvl("run -m " + kModel + " --dtype f32 --weight-cache none --json -q -i " +
                            image + " --temperature 0 -n 5 --ignore-eos 'Describe this image.'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json r = nlohmann::json::parse(run.out);
  EXPECT_EQ(r["object"], "chat.completion");
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(r["usage"]["completion_tokens"], 5);
  EXPECT_GT(r["usage"]["prompt_tokens"].get<int>(), 80);
  EXPECT_EQ(r["timings"]["images"][0]["grid_thw"], nlohmann::json::array({1, 16, 20}));
}

// W8A8 end to end: `qvl quantize` packs both towers into the cache once, under the
// format's name, and `qvl run` answers from the mapped cache.
TEST(RunVerb, W8A8WeightsArePackedOnceAndAnswer) {
  const std::string cache = ::testing::TempDir() + "/qvl_w8a8_cache_" + std::to_string(::getpid());
  std::filesystem::remove_all(cache);
  const std::string flags = " --dtype w8a8 --vision-dtype w8a8 --weight-cache " + cache;
  const QvlRun packed = RunQvl("quantize -m " + kModel + flags);
  ASSERT_EQ(packed.exit_code, 0) << packed.err;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(cache)) {
    files.push_back(e.path().filename());
  }
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(files[0].find("w8a8"), std::string::npos) << files[0];
  const std::string image = kData + "/tiny-qwen3vl/cases/02_one_image_jpeg/images/photo.jpg";
  const QvlRun run = RunQvl("run -m " + kModel + flags + " --json -q -i " + image +
                            " --temperature 0 -n 5 --ignore-eos 'Describe this image.'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json r = nlohmann::json::parse(run.out);
  EXPECT_EQ(r["usage"]["completion_tokens"], 5);
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  std::filesystem::remove_all(cache);
}

// A pre-quantized checkpoint (Qwen's -FP8 layout; llm-compressor's W4A16 with zero
// points; bitsandbytes' double-quantized nf4) answers as the F32 checkpoint of its
// decoded weights does, in the reference's f32 and in q8 through the packed-weight cache.
TEST(RunVerb, AQuantizedCheckpointAnswersAsItsDecodedWeights) {
  const std::string image = kData + "/tiny-qwen3vl/cases/02_one_image_jpeg/images/photo.jpg";
  for (const TestQuantScheme& scheme :
       {TestQuantScheme::QwenFp8(32, 32),
        TestQuantScheme::Compressed(DType::kI32, 4, false, 1, 32, DType::kBF16),
        TestQuantScheme::BitsAndBytes4(FourBitType::kNf4, 64, true, DType::kBF16)}) {
    const ScratchFolder root("run_quantized");
    WriteQuantizedFolder(kModel, root.File("q"), scheme, /*dequantized=*/false);
    WriteQuantizedFolder(kModel, root.File("f32"), scheme, /*dequantized=*/true);
    for (const std::string dtype : {"f32", "q8"}) {
      std::string answers[2];
      for (int i = 0; i < 2; ++i) {
        const QvlRun run =
            RunQvl("run -m " + root.File(i == 0 ? "q" : "f32") + " --dtype " + dtype +
                   " --weight-cache " + root.File("cache") + " --json -q -i " + image +
                   " --temperature 0 -n 12 --ignore-eos 'Describe this image.'");
        ASSERT_EQ(run.exit_code, 0) << run.err;
        answers[i] = nlohmann::json::parse(run.out)["choices"][0]["message"]["content"];
      }
      EXPECT_FALSE(answers[0].empty());
      EXPECT_EQ(answers[0], answers[1]) << scheme.quant.MethodName() << " " << dtype;
    }
  }
}

TEST(RunVerb, BadInputIsOneClearLine) {
  QvlRun run = RunQvl("run -m " + kModel + " -i /nonexistent.jpg 'What is this?'");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("/nonexistent.jpg"), std::string::npos) << run.err;
  run = RunQvl("run -m " + kModel + " --dtype q3 'hi'");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("--dtype q3"), std::string::npos) << run.err;
}

// run's KV cache holds its whole --ctx-size (serve's --kv-cache-mb default would hold a
// million tokens of this model), without a word about a flag run does not have.
TEST(RunVerb, TheKvCacheHoldsTheWholeContext) {
  const QvlRun run = RunQvl("run -m " + kModel +
                            " --dtype f32 --weight-cache none -c 4194304 -n 1 'What is this?'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err.find("the KV cache holds"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("--kv-cache-mb"), std::string::npos) << run.err;
}

TEST(RunVerb, FlagsOutsideTheirRequestRangeAreRefused) {
  const std::string run = "run -m " + kModel + " --dtype f32 --weight-cache none -q ";
  // More than the API's limit, whatever ChatRequestPolicy sets it to.
  std::string stops;
  for (int i = 0; i < 100; ++i) stops += " --stop s" + std::to_string(i);
  const std::pair<std::string, std::string> cases[] = {
      {"-n 0", "--max-tokens: must be between 1 and 1048576, got 0"},
      {"-n -5", "--max-tokens: must be between 1 and 1048576, got -5"},
      {"--temperature 9", "--temperature: must be between 0 and 2, got 9"},
      {"--top-p 0", "--top-p: must be greater than 0 and at most 1, got 0"},
      // serve's range: 0 divided by zero (SIGFPE).
      {"-c 0", "--ctx-size: must be between 16 and 16777216, got 0"},
      {"-c 16 -n 16", "--max-tokens (16) must be below --ctx-size (16)"},
      // The API's checks, which run skipped.
      {"--seed 18446744073709551615",
       "--seed: must be an integer between -9223372036854775808 and 9223372036854775807, got "
       "18446744073709551615"},
      {"--min-pixels -5", "--min-pixels: Value -5 not in range 0 to 1099511627776"},
      {"--max-pixels -5", "--max-pixels: Value -5 not in range 0 to 1099511627776"},
      {"--min-pixels 5000 --max-pixels 4000", "--min-pixels (5000) is larger than --max-pixels"},
      {stops, " stop strings are supported, got 100"},
      {"--stop ''", "qvl: error: --stop: stop strings cannot be empty"},
  };
  QvlRun r;
  for (const auto& [flags, message] : cases) {
    r = RunQvl(run + flags + " hi");
    EXPECT_EQ(r.exit_code, 1) << flags;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  r = RunQvl(run + "--system be-brief --request " + kData +
             "/tiny-qwen3vl/cases/01_text_only/request.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "qvl: error: give either --request or --system, not both: put the system message in "
            "the request\n");
  // The engine's own check, with the numbers: a prompt of 9 tokens leaves 87 of 96.
  r = RunQvl(run + "-c 96 -n 90 hi");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("qvl: error: --max-tokens: the prompt is 9 tokens (0 of them image "
                       "tokens) and --max-tokens asks for 90, but the context holds 96 tokens "
                       "for prompt and answer; ask for at most 87"),
            std::string::npos)
      << r.err;
}

// Input files are checked by size and kind before anything reads them and before the
// model loads (-m names no model here): a 1.5 GB file was read whole after the load,
// /dev/zero ran out of memory, and a folder was "empty (0 bytes)".
TEST(RunVerb, InputFilesAreCheckedBeforeTheModelLoads) {
  const std::string dir = ::testing::TempDir() + "/qvl_run_inputs_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string big = dir + "/big.jpg";
  std::ofstream(big).close();
  std::filesystem::resize_file(big, (uint64_t{16} << 20) + 1);  // sparse: nothing is written
  const std::string clip = kData + "/tiny-qwen3vl/cases/07_video_frames/frames/clip.mp4";
  const std::string photo = kData + "/tiny-qwen3vl/cases/02_one_image_jpeg/images/photo.jpg";
  const std::pair<std::string, std::string> cases[] = {
      {"-i /dev/zero hi", "qvl: error: -i /dev/zero: more than the 16777216 bytes allowed here\n"},
      {"-i " + dir + " hi", "qvl: error: -i " + dir + ": is a folder, not a file\n"},
      {"-v " + dir + " hi", "qvl: error: -v " + dir + ": is a folder, not a file\n"},
      {"--request " + dir, "qvl: error: --request " + dir + ": is a folder, not a file\n"},
      {"-i " + big + " hi",
       "qvl: error: -i " + big + ": 16777217 bytes, more than the 16777216 bytes allowed here\n"},
      {"-i " + clip + " hi", "qvl: error: -i " + clip + ": this is a video; give it with -v\n"},
      {"-v " + photo + " hi", "qvl: error: -v " + photo + ": this is an image; give it with -i\n"},
  };
  for (const auto& [flags, message] : cases) {
    const QvlRun r = RunQvl("run -m /nonexistent/model " + flags);
    EXPECT_EQ(r.exit_code, 1) << flags;
    EXPECT_EQ(r.err, message);
  }
  std::filesystem::remove_all(dir);
}

// A preprocessor at odds with the vision tower is named from the headers, as by info and
// serve, before the weights load: run used to pack the whole model first.
TEST(RunVerb, AFolderAtFaultIsNamedBeforeTheWeightsLoad) {
  ScratchFolder dir("run_preprocessor");
  dir.LinkTinyModel({"preprocessor_config.json"});
  nlohmann::json json =
      nlohmann::json::parse(ReadFileToString(kTinyModelDir + "/preprocessor_config.json"));
  json["patch_size"] = 14;
  dir.Write("preprocessor_config.json", json.dump());
  ScratchFolder cache("run_preprocessor_cache");
  const QvlRun r =
      RunQvl("run -m " + dir.path() + " --dtype q8 --weight-cache " + cache.path() + " -q -n 2 hi");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: " + dir.File("preprocessor_config.json") +
                       ": patch_size is 14, but " + dir.File("config.json") +
                       " has vision_config.patch_size 16; they must agree\n");
  EXPECT_TRUE(std::filesystem::is_empty(cache.path())) << "the weights were packed";
}

// The engine's message for n named `qvl serve --parallel`, which run does not have.
TEST(RunVerb, ARequestForMoreAnswersThanRunGivesSaysSo) {
  const std::string dir = ::testing::TempDir() + "/qvl_run_n_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  nlohmann::json request = nlohmann::json::parse(
      ReadFileToString(kData + "/tiny-qwen3vl/cases/01_text_only/request.json"));
  request["n"] = 100;
  std::ofstream(dir + "/request.json") << request.dump();
  const QvlRun r = RunQvl("run -m " + kModel + " --dtype f32 --weight-cache none -q --request " +
                          dir + "/request.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: " + dir +
                       "/request.json: n is 100; qvl run gives at most 8 "
                       "answers to one request\n");
  std::filesystem::remove_all(dir);
}

// More threads than CPUs only take turns: -t 1024 made 8 tokens take 40 s.
TEST(RunVerb, ThreadsAreCappedAtTheCpuCount) {
  const QvlRun r = RunQvl("run -m " + kModel +
                          " --dtype f32 --weight-cache none -q -t 4096 --temperature 0 -n 2 hi");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--threads 4096 is more than the "), std::string::npos) << r.err;
}

TEST(DumpVerb, TokensOutsideTheirRangeAreRefused) {
  const QvlRun r =
      RunQvl("dump -m " + kModel + " --request x.json --out x.safetensors --tokens -1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--tokens: must be between 1 and 1048576, got -1"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace qvl::cli
