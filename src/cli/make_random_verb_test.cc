// Runs `qvl make-random` on the tiny config, then `qvl info` on the result.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/mapped_file.h"
#include "cli/qvl_runner.h"
#include "model/scratch_folder.h"

namespace qvl::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(MakeRandomVerb, WritesAFolderThatInfoAccepts) {
  ScratchFolder dir("make_random_cli");
  const std::string out = dir.File("model");
  const QvlRun r =
      RunQvl("make-random -c " + kTinyModelDir + "/config.json -o " + out + " --seed 5 -t 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("wrote " + out +
                                ": 121 tensors, 10493440 parameters, model.safetensors "
                                "21000776 bytes, "));
  const QvlRun info = RunQvl("info -m " + out);
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("(qwen3_vl), valid\n"));
}

TEST(MakeRandomVerb, BadFlagsAreOneErrorLine) {
  ScratchFolder dir("make_random_cli_bad");
  QvlRun r =
      RunQvl("make-random -c " + kTinyModelDir + "/config.json -o " + dir.path() + " --dtype f8");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: --dtype f8: use bf16, f16, f32 or fp8\n");
  r = RunQvl("make-random -c /nonexistent/config.json -o " + dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: cannot open /nonexistent/config.json: No such file or directory\n");
  r = RunQvl("make-random -c " + kTinyModelDir + "/config.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--output is required"));
  // Accepted before: -1 threads, and seed -1 as 2^64 - 1.
  r = RunQvl("make-random -c " + kTinyModelDir + "/config.json -o " + dir.path() + " -t -1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--threads: Value -1 not in range"));
  r = RunQvl("make-random -c " + kTinyModelDir + "/config.json -o " + dir.path() + " --seed -1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--seed: must be an integer between 0 and 9223372036854775807, "
                               "got -1"));
  // A mistyped --tokenizer-from fell back to the config's folder.
  r = RunQvl("make-random -c " + kTinyModelDir + "/config.json -o " + dir.File("out") +
             " --tokenizer-from /nonexistent/tok");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "qvl: error: /nonexistent/tok: no such folder (to copy the tokenizer and the other "
            "companion files from)\n");
}

// -o naming a model's folder replaced its weights with random numbers.
TEST(MakeRandomVerb, NeverOverwritesAModel) {
  ScratchFolder dir("make_random_cli_existing");
  dir.Write("model.safetensors", "the real weights");
  const QvlRun r =
      RunQvl("make-random -c " + kTinyModelDir + "/config.json -o " + dir.path() + " -t 2");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: " + dir.File("model.safetensors") +
                       " already exists; make-random never overwrites weights: choose another "
                       "folder\n");
  EXPECT_EQ(ReadFileToString(dir.File("model.safetensors")), "the real weights");
}

}  // namespace
}  // namespace qvl::cli
