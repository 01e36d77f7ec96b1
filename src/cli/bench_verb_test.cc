// Runs `qvl bench` on the fixture model: the request it measures is the fixture's
// (same prompt tokens as the reference), every figure is present, and bad flags are one
// error line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/qvl_runner.h"
#include "model/scratch_folder.h"

namespace qvl::cli {
namespace {

using ::testing::HasSubstr;

const std::string kImage =
    std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/02_one_image_jpeg/images/photo.jpg";

TEST(BenchVerb, MeasuresTheFixtureRequest) {
  const QvlRun r = RunQvl("bench -m " + kTinyModelDir + " --image " + kImage +
                          " --tokens 3 --runs 1 --threads 2 --dtype bf16 --vision-dtype bf16"
                          " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["prompt_tokens"], 94);  // as the fixture case 02_one_image_jpeg
  EXPECT_EQ(j["image_tokens"], 80);
  EXPECT_EQ(j["generated_tokens"], 3);
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(j["dtype"], "bf16");
  for (const char* key : {"preprocess_ms", "vision_encode_ms", "prefill_ms", "prefill_tok_s",
                          "time_to_first_token_ms", "decode_tok_s", "total_ms", "load_cold_ms",
                          "load_warm_ms", "peak_rss_mib", "memory_bandwidth_gb_s",
                          "decode_bytes_per_token", "decode_percent_of_bound"}) {
    EXPECT_GT(j[key].get<double>(), 0.0) << key;
  }
  EXPECT_GE(j["time_to_first_token_ms"].get<double>(),
            j["vision_encode_ms"].get<double>() + j["prefill_ms"].get<double>());
  EXPECT_FALSE(j["kernel_tier"].get<std::string>().empty());
}

TEST(BenchVerb, TableWithoutAnImage) {
  const QvlRun r = RunQvl("bench -m " + kTinyModelDir +
                          " --prompt hello --tokens 2 --runs 1 --dtype f32 --vision-dtype f32");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("prompt tokens (0 image), 2 generated, median of 1 runs\n"));
  EXPECT_THAT(r.out, HasSubstr("  time to first token"));
  EXPECT_THAT(r.out, HasSubstr("% of the "));
}

TEST(BenchVerb, BadFlagsAreOneErrorLine) {
  QvlRun r = RunQvl("bench -m " + kTinyModelDir + " --tokens 0");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: --tokens must be at least 1\n");
  r = RunQvl("bench -m " + kTinyModelDir + " --dtype q3");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: --dtype q3: use f32, bf16, bf16-packed, q8 or q4\n");
  r = RunQvl("bench -m " + kTinyModelDir + " --image /nonexistent.jpg");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent.jpg"));
}

}  // namespace
}  // namespace qvl::cli
