// Runs the qvl binary: `qvl tokenize` on fixture strings, both directions.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

namespace {

const std::string kModel = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/model";

struct RunResult {
  int exit_code;
  std::string output;  // stdout and stderr
};

RunResult RunQvl(const std::string& args, const std::string& input) {
  const std::filesystem::path input_path =
      std::filesystem::temp_directory_path() / ("qvl_tokenize_test_" + std::to_string(getpid()));
  std::ofstream(input_path, std::ios::binary) << input;
  const std::string command =
      std::string(QVL_BUILD_DIR) + "/qvl " + args + " < " + input_path.string() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << command;
  RunResult result{-1, ""};
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::filesystem::remove(input_path);
  return result;
}

TEST(TokenizeVerbTest, PrintsIdsAsAJsonArray) {
  RunResult r = RunQvl("tokenize -m " + kModel, "Hello, world!");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "[9707,11,1879,0]\n");

  r = RunQvl("tokenize -m " + kModel, "<|im_start|>user\nHello<|im_end|>\n");
  EXPECT_EQ(r.output, "[151644,872,198,9707,151645,198]\n");

  r = RunQvl("tokenize -m " + kModel, "");
  EXPECT_EQ(r.output, "[]\n");
}

TEST(TokenizeVerbTest, DecodesAJsonArray) {
  RunResult r = RunQvl("tokenize -m " + kModel + " --decode",
                       "[108386, 3837, 99489, 6313, 100644, 104307, 104472, 11319]");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "你好，世界！今天天气怎么样？");

  r = RunQvl("tokenize -m " + kModel + " --decode --skip-special", "[151644,872,198,9707,151645]");
  EXPECT_EQ(r.output, "user\nHello");
}

TEST(TokenizeVerbTest, ReportsBadInput) {
  RunResult r = RunQvl("tokenize -m " + kModel + " --decode", "[1, \"two\"]");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "qvl: error: stdin: element 1 (\"two\") is not a token id\n");

  r = RunQvl("tokenize -m " + kModel + " --decode", "hello");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "qvl: error: stdin: expected a JSON array of token ids\n");

  // Ids no token has were skipped: exit 0 and no output.
  for (const auto& [ids, element, id] :
       {std::tuple{"[-1]", 0, "-1"}, std::tuple{"[9707, 151936]", 1, "151936"},
        std::tuple{"[1, 2, 18446744073709551615]", 2, "18446744073709551615"}}) {
    r = RunQvl("tokenize -m " + kModel + " --decode", ids);
    EXPECT_EQ(r.exit_code, 1) << ids;
    EXPECT_EQ(r.output, "qvl: error: stdin: element " + std::to_string(element) + " (" + id +
                            ") is not a token id of " + kModel + "/tokenizer.json (0 to 151668)\n");
  }

  r = RunQvl("tokenize -m /nonexistent", "x");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.output, "qvl: error: model folder /nonexistent does not exist\n");
}

}  // namespace
