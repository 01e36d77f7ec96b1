#include "cli/chat_input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>

#include "cli/chat_repl.h"

namespace qvl::cli {
namespace {

using ::testing::ElementsAre;
using Kind = ChatInput::Kind;

// Lines as a terminal or a pipe delivers them.
class PipeLines {
 public:
  explicit PipeLines(const std::string& text) {
    EXPECT_EQ(::pipe(fds_), 0);
    EXPECT_EQ(::write(fds_[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fds_[1]);
  }
  ~PipeLines() { ::close(fds_[0]); }
  int fd() const { return fds_[0]; }

 private:
  int fds_[2];
};

std::vector<std::string> Entries(const std::string& text, int* continuations = nullptr) {
  PipeLines pipe(text);
  LineReader lines(pipe.fd());
  std::vector<std::string> entries;
  std::string entry;
  while (ReadChatEntry(
             lines,
             [&] {
               if (continuations) ++*continuations;
             },
             &entry) == LineReader::Status::kLine) {
    entries.push_back(entry);
  }
  return entries;
}

TEST(ChatInput, ReadsLinesAndBlocksBetweenTripleQuotes) {
  int more = 0;
  EXPECT_THAT(Entries("hello\r\n\"\"\"first\nsecond\n  third\"\"\"\nlast", &more),
              ElementsAre("hello", "first\nsecond\n  third", "last"));
  EXPECT_EQ(more, 2);
  EXPECT_THAT(Entries("\"\"\"one line\"\"\"\n\"\"\"\nopened alone\n\"\"\"\n"),
              ElementsAre("one line", "opened alone"));
  // Stdin ends inside a block: what was typed is the entry.
  EXPECT_THAT(Entries("\"\"\"never\nclosed"), ElementsAre("never\nclosed"));
  EXPECT_THAT(Entries(""), ElementsAre());
}

class ChatInputFiles : public ::testing::Test {
 protected:
  // Files that exist, as far as the parser is told.
  std::set<std::string> files_ = {"/tmp/cat.jpg", "/tmp/my photo.PNG", "/tmp/clip.mp4",
                                  "/home/me/dog.webp"};
  ChatInput Parse(const std::string& entry) {
    return ParseChatInput(entry, [&](const std::string& p) { return files_.count(p) > 0; });
  }
};

TEST_F(ChatInputFiles, CommandsAreUnderstood) {
  EXPECT_EQ(Parse("  ").kind, Kind::kEmpty);
  for (const char* bye : {"/bye", "/exit", "/quit", " /bye  "})
    EXPECT_EQ(Parse(bye).kind, Kind::kBye);
  EXPECT_EQ(Parse("/clear").kind, Kind::kClear);
  EXPECT_EQ(Parse("/?").kind, Kind::kHelp);
  EXPECT_EQ(Parse("/help").kind, Kind::kHelp);
  const ChatInput system = Parse("/system  You answer in French. ");
  EXPECT_EQ(system.kind, Kind::kSystem);
  EXPECT_EQ(system.text, "You answer in French.");
  const ChatInput unknown = Parse("/sett verbose");
  EXPECT_EQ(unknown.kind, Kind::kUnknown);
  EXPECT_EQ(unknown.text, "/sett");
  const ChatInput image = Parse("/image /tmp/cat.jpg '/tmp/my photo.PNG' missing.jpg");
  EXPECT_EQ(image.kind, Kind::kAttach);
  // /image takes its paths as given: a missing one is reported when it is read.
  EXPECT_THAT(image.images, ElementsAre("/tmp/cat.jpg", "/tmp/my photo.PNG", "missing.jpg"));
  EXPECT_THAT(Parse("/video /tmp/clip.mp4").videos, ElementsAre("/tmp/clip.mp4"));
  EXPECT_EQ(Parse("/image").kind, Kind::kAttach);
  EXPECT_TRUE(Parse("/image").images.empty());
}

TEST_F(ChatInputFiles, PathsInAQuestionBecomeAttachments) {
  const ChatInput in = Parse("what is in /tmp/cat.jpg and /tmp/my\\ photo.PNG?");
  EXPECT_EQ(in.kind, Kind::kQuestion);
  // "?" glued to a path makes it another file's name, which does not exist.
  EXPECT_THAT(in.images, ElementsAre("/tmp/cat.jpg"));
  EXPECT_EQ(in.text, "what is in and /tmp/my\\ photo.PNG?");
  const ChatInput glued = Parse("what is in /tmp/cat.jpg and \"/tmp/my photo.PNG\" ?");
  EXPECT_THAT(glued.images, ElementsAre("/tmp/cat.jpg", "/tmp/my photo.PNG"));
  EXPECT_EQ(glued.text, "what is in and ?");
  // A question may start with a path; a word that is not a file stays text.
  const ChatInput first = Parse("/tmp/clip.mp4 summarize this; compare with /tmp/none.jpg");
  EXPECT_EQ(first.kind, Kind::kQuestion);
  EXPECT_THAT(first.videos, ElementsAre("/tmp/clip.mp4"));
  EXPECT_TRUE(first.images.empty());
  EXPECT_EQ(first.text, "summarize this; compare with /tmp/none.jpg");
  // Paths alone attach to the next question.
  const ChatInput alone = Parse("'/tmp/cat.jpg'");
  EXPECT_EQ(alone.kind, Kind::kAttach);
  EXPECT_THAT(alone.images, ElementsAre("/tmp/cat.jpg"));
}

TEST_F(ChatInputFiles, HomeIsExpanded) {
  ::setenv("HOME", "/home/me", 1);
  const ChatInput in = Parse("describe ~/dog.webp");
  EXPECT_THAT(in.images, ElementsAre("/home/me/dog.webp"));
  EXPECT_EQ(in.text, "describe");
}

TEST(ChatConversation, AFollowUpCarriesTheTurnsAndTheirImages) {
  ChatConversation c;
  c.SetSystem("Be brief.");
  c.Add("What is this?", {{"a.png", "PNG-A", false}}, "A cat.");
  const GenerationRequest r = c.Ask("And this one?", {{"b.mp4", "MP4-B", true}});
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[1].role, "user");
  ASSERT_EQ(r.messages[1].parts.size(), 2u);
  EXPECT_EQ(r.messages[1].parts[0].kind, ChatPart::Kind::kImage);
  EXPECT_EQ(r.messages[1].parts[1].text, "What is this?");
  EXPECT_EQ(r.messages[2].role, "assistant");
  EXPECT_EQ(r.messages[2].parts[0].text, "A cat.");
  EXPECT_EQ(r.messages[3].parts[0].kind, ChatPart::Kind::kVideo);
  EXPECT_EQ(r.messages[3].parts[1].text, "And this one?");
  ASSERT_EQ(r.images.size(), 1u);
  EXPECT_EQ(std::string(r.images[0].bytes.begin(), r.images[0].bytes.end()), "PNG-A");
  ASSERT_EQ(r.videos.size(), 1u);
  EXPECT_EQ(r.videos[0].name, "b.mp4");
  c.Clear();
  EXPECT_EQ(c.Ask("Hi", {}).messages.size(), 2u);  // the system message stays
  c.SetSystem("");
  EXPECT_EQ(c.Ask("Hi", {}).messages.size(), 1u);
}

}  // namespace
}  // namespace qvl::cli
