// A Qwen3-VL Thinking model's answer, split into its reasoning and its reply. The prompt
// already opened "<think>\n" (ChatTemplateKind::kThinking), so everything generated up to
// "</think>" is reasoning and what follows is the reply. Newlines around the tag are
// dropped as the template drops them when the message comes back in the history
// (reasoning_content.strip('\n'), content.lstrip('\n')), so a client that sends back the
// two fields it received gets the same prompt the model wrote.
#pragma once

#include <string>
#include <string_view>

namespace qvl {

// The tag that ends the reasoning: one token in the Qwen3-VL vocabulary.
inline constexpr std::string_view kReasoningEnd = "</think>";
// What the template writes between the tag and the reply.
inline constexpr std::string_view kReplySeparator = "\n\n";

// Takes the generated text in pieces as it streams (a piece may end inside the tag, or
// inside the newlines before it) and hands out each part as soon as it is certain; the
// parts of a whole text fed at once are the same as of the text fed in any pieces.
class ReasoningSplitter {
 public:
  struct Output {
    std::string reasoning;
    std::string content;
  };

  // Appends to `out` what `text` makes certain.
  void Feed(std::string_view text, Output* out);
  // The text is complete: appends what was held back (a tag never finished is
  // reasoning; newlines at the end of the reasoning are dropped).
  void Finish(Output* out);
  // "</think>" has come: what follows is the reply.
  bool answering() const { return state_ != State::kReasoning; }

 private:
  enum class State { kReasoning, kReplyStart, kReply };
  State state_ = State::kReasoning;
  bool reasoning_started_ = false;  // something but newlines came
  std::string held_;                // reasoning not certain yet: newlines, a tag's start
  size_t newlines_ = 0;             // the newlines held_ starts with
};

}  // namespace qvl
