// `qvl run` without a prompt: at a terminal, a chat whose follow-ups are the conversation
// so far (checked against the same conversation sent whole with --request); piped, one
// question read from stdin. The tiny fixture model, greedy, so answers repeat.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include <gmock/gmock.h>

#include "cli/qvl_runner.h"
#include "cli/terminal_for_test.h"

namespace qvl::cli {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const std::string kData = QVL_TEST_DATA;
const std::string kModel = kData + "/tiny-qwen3vl/model";
const std::string kImage = kData + "/tiny-qwen3vl/cases/02_one_image_jpeg/images/photo.jpg";
const std::string kFlags = " --dtype f32 --weight-cache none --temperature 0 -n 6 ";
const std::string kQuestion = "What is in this image?";
const std::string kFollowUp = "And its colours?";

std::string Chat(const std::string& extra = "") { return "run -m " + kModel + kFlags + extra; }

// The terminal's "\r\n" as "\n".
std::string Lines(std::string s) { return std::regex_replace(s, std::regex("\r\n"), "\n"); }

std::string WriteRequest(const nlohmann::json& request) {
  const std::string path =
      ::testing::TempDir() + "/qvl_chat_request_" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << request.dump();
  return path;
}

// The answer of `qvl run` given `args` (no timing line).
std::string OneShot(const std::string& args, const std::string& env = "") {
  const QvlRun run = RunQvl(Chat("-q " + args), env);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return run.out;
}

TEST(RunChat, AFollowUpIsTheConversationSoFar) {
  const std::string first = OneShot("-i " + kImage + " '" + kQuestion + "'");
  ASSERT_FALSE(first.empty());

  TerminalSession chat(Chat());
  chat.ReadUntil(">>> ");
  // The path dropped into the question is the image; the rest is the question.
  chat.Type(kImage + " " + kQuestion + "\n");
  const std::string answer1 = Lines(chat.ReadUntil(">>> "));
  EXPECT_NE(answer1.find("Added image '" + kImage + "'\n"), std::string::npos) << answer1;
  EXPECT_NE(answer1.find(first), std::string::npos) << answer1 << "\nexpected:\n" << first;
  chat.Type(kFollowUp + "\n");
  const std::string answer2 = Lines(chat.ReadUntil(">>> "));
  // The image of the first turn is not encoded again.
  EXPECT_NE(answer2.find("tokens | decode"), std::string::npos) << answer2;
  EXPECT_NE(answer2.find("(cached)]"), std::string::npos) << answer2;
  chat.Type("/bye\n");
  chat.Finish();

  // The same conversation as one request gives the same second answer.
  const std::string reply1 = first.substr(0, first.size() - 1);  // without run's "\n"
  const nlohmann::json request = {{"messages",
                                   {{{"role", "user"},
                                     {"content",
                                      {{{"type", "image_url"}, {"image_url", {{"url", kImage}}}},
                                       {{"type", "text"}, {"text", kQuestion}}}}},
                                    {{"role", "assistant"}, {"content", reply1}},
                                    {{"role", "user"}, {"content", kFollowUp}}}}};
  const std::string second = OneShot("--request " + WriteRequest(request));
  ASSERT_FALSE(second.empty());
  EXPECT_THAT(answer2, HasSubstr(kFollowUp + "\n" + second));
}

TEST(RunChat, CtrlCStopsTheAnswerAndTheChatGoesOn) {
  TerminalSession chat("run -m " + kModel +
                       " --dtype f32 --weight-cache none -c 65536 -n 60000 --ignore-eos");
  chat.ReadUntil(">>> ");
  chat.Type("Count to a million.\n");
  // Once the answer streams.
  chat.ReadUntil("Count to a million.\r\n");
  chat.ReadMore();
  chat.Type("\x03");
  const std::string stopped = Lines(chat.ReadUntil(">>> "));
  std::smatch tokens;
  ASSERT_TRUE(std::regex_search(stopped, tokens, std::regex(R"(\| (\d+) tokens, )"))) << stopped;
  EXPECT_LT(std::stoll(tokens[1]), 60000) << stopped;
  // Ctrl+C at the prompt does not end the chat either; Ctrl+D does.
  chat.Type("\x03");
  chat.ReadUntil("Use Ctrl + d or /bye to exit.");
  chat.ReadUntil(">>> ");
  chat.Type("\x04");
  chat.Finish();
}

TEST(RunChat, CommandsAndMistakesAreAnswered) {
  TerminalSession chat(Chat("-q"));
  chat.ReadUntil(">>> ");
  chat.Type("/?\n");
  EXPECT_NE(chat.ReadUntil(">>> ").find("/image PATH"), std::string::npos);
  chat.Type("/nope\n");
  EXPECT_NE(chat.ReadUntil(">>> ").find("Unknown command '/nope'. Type /? for help"),
            std::string::npos);
  chat.Type("/image /nonexistent.png\n");
  EXPECT_THAT(chat.ReadUntil(">>> "),
              AllOf(HasSubstr("qvl: error: /image"), HasSubstr("/nonexistent.png: No such file")));
  chat.Type("/image " + kModel + "/config.json\n");
  EXPECT_THAT(chat.ReadUntil(">>> "),
              HasSubstr("qvl: error: /image " + kModel +
                        "/config.json is not a JPEG, PNG, WebP, GIF or BMP image"));
  // A question over several lines.
  chat.Type("\"\"\"\nfirst line\nsecond line\n\"\"\"\n");
  EXPECT_NE(chat.ReadUntil(">>> ").find("... "), std::string::npos);
  chat.Type("/clear\n");
  EXPECT_NE(chat.ReadUntil(">>> ").find("Cleared the conversation."), std::string::npos);
  chat.Type("/bye\n");
  chat.Finish();
}

TEST(RunChat, AChatCannotPrintJson) {
  TerminalSession chat(Chat("--json"));
  EXPECT_NE(chat.ReadUntil("not a chat").find("--json prints one answer"), std::string::npos);
  chat.Finish(1);
}

TEST(RunPipedPrompt, AQuestionOnStdinIsAnsweredOnce) {
  const std::string expected = OneShot("-i " + kImage + " '" + kQuestion + "'");
  EXPECT_EQ(OneShot("-i " + kImage, "printf '%s\\n' '" + kQuestion + "' | "), expected);
  const QvlRun empty = RunQvl(Chat("-i " + kImage), "true | ");
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_NE(empty.err.find("no prompt: give one, pipe it on stdin"), std::string::npos)
      << empty.err;
}

}  // namespace
}  // namespace qvl::cli
