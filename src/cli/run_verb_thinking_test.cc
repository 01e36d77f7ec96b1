// `qvl run` on a Qwen3-VL Thinking model: the tiny fixture model with the Thinking chat
// template (tests/data/qwen3vl-thinking) in place of its Instruct one. Its random weights
// never write "</think>" by themselves, so the tests raise it with logit_bias where they
// need a reply after the reasoning. The printed text is checked against the reasoning and
// reply of the same request's --json response, which the server's encoder splits.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "base/mapped_file.h"
#include "cli/qvl_runner.h"
#include "cli/terminal_for_test.h"
#include "model/model_folder_for_test.h"
#include "text/tokenizer.h"

namespace qvl::cli {
namespace {

const std::string kData = QVL_TEST_DATA;
const std::string kInstruct = kData + "/tiny-qwen3vl/model";
const std::string kFlags = " --dtype f32 --weight-cache none ";
const std::string kQuestion = "Why is the sky blue?";

// What `qvl ARGS` writes to a terminal (stdout and stderr both: the one terminal), with
// its "\n" as the terminal sends it back, "\r\n".
std::string RunQvlInTerminal(const std::string& args, const std::string& env = "") {
  return TerminalSession(args, env).Finish();
}

class RunThinkingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = new std::string(ThinkingModelFolder(kInstruct));
    think_end_ = Tokenizer::FromFile(kInstruct + "/tokenizer.json").TokenToId("</think>");
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*model_);
    delete model_;
    model_ = nullptr;
  }

  // `qvl run` on the Thinking model.
  static QvlRun Run(const std::string& args) { return RunQvl("run -m " + *model_ + kFlags + args); }
  // A request file for the question with "</think>" raised by `bias`.
  static std::string RequestWithBias(const std::string& name, int bias, int max_tokens) {
    const nlohmann::json request = {{"messages", {{{"role", "user"}, {"content", kQuestion}}}},
                                    {"logit_bias", {{std::to_string(think_end_), bias}}},
                                    {"max_tokens", max_tokens}};
    const std::string path =
        ::testing::TempDir() + "/qvl_thinking_" + name + "_" + std::to_string(::getpid()) + ".json";
    std::ofstream(path) << request.dump();
    return path;
  }

  static inline std::string* model_ = nullptr;
  static inline int think_end_ = -1;
};

// Cut off by --max-tokens before "</think>": all of it is reasoning, closed by its mark,
// and run says why there is no reply.
TEST_F(RunThinkingTest, AnAnswerCutOffWhileItThinksIsAllReasoning) {
  const std::string args = "--temperature 0 -n 4 '" + kQuestion + "'";
  const QvlRun json = Run("-q --json " + args);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json r = nlohmann::json::parse(json.out);
  const nlohmann::json& message = r["choices"][0]["message"];
  EXPECT_EQ(message["content"], "");
  ASSERT_TRUE(message["reasoning_content"].is_string()) << json.out;
  const std::string reasoning = message["reasoning_content"];
  ASSERT_FALSE(reasoning.empty()) << json.out;
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(r["usage"]["completion_tokens"], 4);
  EXPECT_EQ(r["usage"]["completion_tokens_details"]["reasoning_tokens"], 4);

  const QvlRun text = Run("-q " + args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out, "Thinking...\n" + reasoning + "\n...done thinking.\n\n\n");
  EXPECT_EQ(text.err,
            "qvl: the answer reached its token limit while the model was still thinking, so "
            "there is no reply; raise --max-tokens (-n)\n");

  const QvlRun timed = Run(args);
  ASSERT_EQ(timed.exit_code, 0) << timed.err;
  EXPECT_NE(timed.err.find(" | 4 tokens (4 thinking), "), std::string::npos) << timed.err;
}

// "</think>" raised enough to come after a few tokens of reasoning (the sixth, greedy):
// the reasoning stands between the marks, the reply after them; --hide-thinking prints
// the reply alone.
TEST_F(RunThinkingTest, TheReasoningComesBeforeTheReplyOrIsHidden) {
  const std::string request = RequestWithBias("split", 3, 12);
  const std::string args = "--request " + request + " --temperature 0";
  const QvlRun json = Run("-q --json " + args);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json r = nlohmann::json::parse(json.out);
  const std::string reasoning = r["choices"][0]["message"]["reasoning_content"];
  const std::string reply = r["choices"][0]["message"]["content"];
  ASSERT_FALSE(reasoning.empty()) << json.out;
  ASSERT_FALSE(reply.empty()) << json.out;
  EXPECT_GT(r["usage"]["completion_tokens_details"]["reasoning_tokens"].get<int>(), 1);

  const QvlRun shown = Run("-q " + args);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.out, "Thinking...\n" + reasoning + "\n...done thinking.\n\n" + reply + "\n");
  EXPECT_EQ(shown.err, "");

  const QvlRun hidden = Run("--hide-thinking " + args);
  ASSERT_EQ(hidden.exit_code, 0) << hidden.err;
  EXPECT_EQ(hidden.out, reply + "\n");
  EXPECT_EQ(hidden.err.rfind("Thinking...\n...done thinking.\n[load ", 0), 0u) << hidden.err;

  const QvlRun quiet = Run("-q --hide-thinking " + args);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out, reply + "\n");
  EXPECT_EQ(quiet.err, "");
  std::filesystem::remove(request);
}

// --thinking-budget: two tokens of reasoning, then "</think>" (which this model never
// writes by itself) and the reply, printed after the marks; out of range, refused before
// the model loads.
TEST_F(RunThinkingTest, AThinkingBudgetEndsTheReasoningThere) {
  const std::string args = "--temperature 0 -n 6 --thinking-budget 2 '" + kQuestion + "'";
  const QvlRun json = Run("-q --json " + args);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json r = nlohmann::json::parse(json.out);
  EXPECT_EQ(r["usage"]["completion_tokens"], 6);
  EXPECT_EQ(r["usage"]["completion_tokens_details"]["reasoning_tokens"], 3);
  const std::string reasoning = r["choices"][0]["message"]["reasoning_content"];
  const std::string reply = r["choices"][0]["message"]["content"];
  ASSERT_FALSE(reply.empty()) << json.out;

  const QvlRun shown = Run("-q " + args);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_EQ(shown.out, "Thinking...\n" + reasoning + "\n...done thinking.\n\n" + reply + "\n");

  const QvlRun bad = Run("--thinking-budget -1 '" + kQuestion + "'");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--thinking-budget"), std::string::npos) << bad.err;
}

// "</think>" first: no reasoning and no marks; only the first tag ends it, so the rest is
// the reply, as the server's TheReplyIsWhatFollowsTheTag.
TEST_F(RunThinkingTest, AnAnswerThatEndsTheReasoningAtOnceIsOnlyItsReply) {
  const std::string request = RequestWithBias("at_once", 100, 3);
  const QvlRun run = Run("-q --request " + request);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "</think></think>\n");
  std::filesystem::remove(request);
}

// Dim on a terminal, where NO_COLOR does not ask for plain text; never in a pipe.
TEST_F(RunThinkingTest, TheReasoningIsDimOnATerminalOnly) {
  const std::string args =
      "run -m " + *model_ + kFlags + "-q --temperature 0 -n 4 '" + kQuestion + "'";
  // Whatever the test's own environment holds.
  const std::string colour = "-u NO_COLOR TERM=xterm ";
  const std::string terminal = RunQvlInTerminal(args, colour);
  EXPECT_EQ(terminal.rfind("\x1b[2mThinking...\r\n", 0), 0u) << terminal;
  EXPECT_NE(terminal.find("\r\n...done thinking.\x1b[0m\r\n\r\n"), std::string::npos) << terminal;
  EXPECT_EQ(RunQvlInTerminal(args, colour + "NO_COLOR=1 ").find('\x1b'), std::string::npos);
  EXPECT_EQ(RunQvlInTerminal(args, "-u NO_COLOR TERM=dumb ").find('\x1b'), std::string::npos);
  const QvlRun piped = RunQvl(args);
  EXPECT_EQ(piped.out.find('\x1b'), std::string::npos) << piped.out;
}

TEST(RunVerbHelp, NamesTheHideThinkingFlag) {
  const QvlRun help = RunQvl("run --help");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("--hide-thinking"), std::string::npos) << help.out;
}

// An Instruct model's answer is untouched by the flag, and its response has no
// reasoning_content.
TEST(RunVerbInstruct, AnInstructAnswerIsTheSameWithHideThinking) {
  const std::string dir = kData + "/tiny-qwen3vl/cases/02_one_image_jpeg";
  const nlohmann::json meta = nlohmann::json::parse(ReadFileToString(dir + "/meta.json"));
  const std::string args = "run -m " + kInstruct + kFlags + "--request " + dir + "/request.json";
  const QvlRun run = RunQvl(args + " --hide-thinking");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, meta["greedy_text"].get<std::string>() + "\n");
  EXPECT_EQ(run.err.rfind("[load ", 0), 0u) << run.err;
  EXPECT_EQ(run.err.find("thinking"), std::string::npos) << run.err;

  const QvlRun json = RunQvl(args + " -q --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json r = nlohmann::json::parse(json.out);
  EXPECT_EQ(r["choices"][0]["message"]["content"], meta["greedy_text"]);
  EXPECT_FALSE(r["choices"][0]["message"].contains("reasoning_content")) << json.out;
  EXPECT_FALSE(r["usage"].contains("completion_tokens_details")) << json.out;
}

}  // namespace
}  // namespace qvl::cli
