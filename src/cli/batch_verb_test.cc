// `qvl batch` from the command line: its flags, files, summary and exit code (the
// requests themselves: batch_client_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cli/qvl_runner.h"

namespace qvl::cli {
namespace {

using ::testing::HasSubstr;

TEST(BatchVerb, WritesAResultPerRequestAndFailsWhenOneFailed) {
  const std::string dir = ::testing::TempDir();
  const std::string input = dir + "/batch_verb_in.jsonl", output = dir + "/batch_verb_out.jsonl";
  std::ofstream(input) << R"({"custom_id":"a","method":"POST","url":"/v1/completions",)"
                       << R"("body":{"prompt":"x"}})"
                       << "\n\n"
                       << R"({"custom_id":"b","method":"GET"})"
                       << "\n";
  // Port 1 answers nothing: both lines fail, each in its own way.
  QvlRun run = RunQvl("batch --url http://127.0.0.1:1 --retries 0 -i " + input + " -o " + output,
                      "env -u OPENAI_API_KEY ");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.err, "qvl batch: 2 requests: 0 answered, 2 failed\n");
  std::ifstream results(output);
  std::string first, second, extra;
  ASSERT_TRUE(std::getline(results, first));
  ASSERT_TRUE(std::getline(results, second));
  EXPECT_FALSE(std::getline(results, extra));
  EXPECT_THAT(first,
              HasSubstr(R"("custom_id":"a","response":null,"error":{"code":"connection_error")"));
  EXPECT_THAT(second, HasSubstr(R"("message":"line 3: method: expected \"POST\"")"));

  run = RunQvl("batch --concurrency 0");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("--concurrency: Value 0 not in range 1 to 256"));
  run = RunQvl("batch -i /nonexistent/requests.jsonl");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err, "qvl: error: --input /nonexistent/requests.jsonl: cannot be read\n");
  run = RunQvl("batch --url https://example.com -i " + input);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("https is not supported"));
}

}  // namespace
}  // namespace qvl::cli
