// Runs `qvl make-random` on the tiny config, then `qvl info` on the result.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
  EXPECT_EQ(r.err, "qvl: error: --dtype f8: use bf16, f16 or f32\n");
  r = RunQvl("make-random -c /nonexistent/config.json -o " + dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "qvl: error: cannot open /nonexistent/config.json: No such file or directory\n");
  r = RunQvl("make-random -c " + kTinyModelDir + "/config.json");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("--output is required"));
}

}  // namespace
}  // namespace qvl::cli
