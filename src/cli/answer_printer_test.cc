#include "cli/answer_printer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace qvl::cli {
namespace {

// What an AnswerPrinter wrote to its two streams for `pieces`, fed in order.
struct Printed {
  std::string out;
  std::string status;
  bool still_reasoning = false;
};

class MemoryFile {
 public:
  MemoryFile() : file_(::open_memstream(&data_, &size_)) {}
  ~MemoryFile() {
    if (file_ != nullptr) std::fclose(file_);
    std::free(data_);
  }
  std::FILE* file() const { return file_; }
  std::string Text() {
    std::fflush(file_);
    return std::string(data_, size_);
  }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
};

Printed Print(const AnswerPrinterOptions& options, const std::vector<std::string>& pieces,
              bool with_status = true) {
  MemoryFile out, status;
  AnswerPrinter printer(options, out.file(), with_status ? status.file() : nullptr);
  for (const std::string& piece : pieces) printer.Print(piece);
  printer.Finish();
  return {out.Text(), status.Text(), printer.still_reasoning()};
}

const std::vector<std::string> kThought = {"\nThe sky", " scatters blue.\n\n</th", "ink>",
                                           "\n\nRayleigh", " scattering."};

TEST(AnswerPrinter, AnInstructAnswerIsWrittenAsItComes) {
  const Printed p = Print({}, {"\nA </think> tag", " stays.\n\n"});
  EXPECT_EQ(p.out, "\nA </think> tag stays.\n\n");
  EXPECT_EQ(p.status, "");
  EXPECT_FALSE(p.still_reasoning);
}

TEST(AnswerPrinter, TheReasoningStandsBetweenTheMarksBeforeTheReply) {
  const Printed p = Print({.split_reasoning = true}, kThought);
  EXPECT_EQ(p.out,
            "Thinking...\nThe sky scatters blue.\n...done thinking.\n\nRayleigh scattering.");
  EXPECT_EQ(p.status, "");
  EXPECT_FALSE(p.still_reasoning);
}

TEST(AnswerPrinter, HiddenReasoningLeavesTheReplyAndMarksTheStatus) {
  const Printed p = Print({.split_reasoning = true, .hide_reasoning = true}, kThought);
  EXPECT_EQ(p.out, "Rayleigh scattering.");
  EXPECT_EQ(p.status, "Thinking...\n...done thinking.\n");
  const Printed quiet =
      Print({.split_reasoning = true, .hide_reasoning = true}, kThought, /*with_status=*/false);
  EXPECT_EQ(quiet.out, "Rayleigh scattering.");
}

TEST(AnswerPrinter, OnATerminalTheReasoningAndItsMarksAreDim) {
  const Printed p = Print({.split_reasoning = true, .dim_reasoning = true}, kThought);
  EXPECT_EQ(p.out,
            "\x1b[2mThinking...\nThe sky scatters blue.\n...done thinking.\x1b[0m\n\nRayleigh "
            "scattering.");
  const Printed hidden =
      Print({.split_reasoning = true, .hide_reasoning = true, .dim_reasoning = true}, kThought);
  EXPECT_EQ(hidden.out, "Rayleigh scattering.");
  EXPECT_EQ(hidden.status, "Thinking...\n...done thinking.\n");
}

// No reasoning, no marks: the reply is all there is.
TEST(AnswerPrinter, AnAnswerThatEndsTheReasoningAtOnceIsOnlyItsReply) {
  const Printed p = Print({.split_reasoning = true}, {"</think>", "\n\nBlue."});
  EXPECT_EQ(p.out, "Blue.");
  const Printed hidden = Print({.split_reasoning = true, .hide_reasoning = true}, {"</think>"});
  EXPECT_EQ(hidden.out, "");
  EXPECT_EQ(hidden.status, "");
}

// Cut off before "</think>": the reasoning is closed (the terminal's colour back) and the
// printer says so, for run's warning.
TEST(AnswerPrinter, AnAnswerCutOffWhileItReasonsIsClosed) {
  const Printed p = Print({.split_reasoning = true, .dim_reasoning = true}, {"Hmm, the", " sky\n"});
  EXPECT_EQ(p.out, "\x1b[2mThinking...\nHmm, the sky\n...done thinking.\x1b[0m\n\n");
  EXPECT_TRUE(p.still_reasoning);
}

}  // namespace
}  // namespace qvl::cli
