#include "text/reasoning_split.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

namespace qvl {
namespace {

struct Split {
  std::string reasoning, content;
  bool operator==(const Split&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Split& s) {
  return os << "{reasoning \"" << s.reasoning << "\", content \"" << s.content << "\"}";
}

Split Whole(const std::string& text) {
  ReasoningSplitter splitter;
  ReasoningSplitter::Output out;
  splitter.Feed(text, &out);
  splitter.Finish(&out);
  return {out.reasoning, out.content};
}

// Fed a byte at a time: what each piece made certain, in order.
std::vector<Split> Bytewise(const std::string& text) {
  ReasoningSplitter splitter;
  std::vector<Split> pieces;
  for (const char c : text) {
    ReasoningSplitter::Output out;
    splitter.Feed(std::string_view(&c, 1), &out);
    if (!out.reasoning.empty() || !out.content.empty())
      pieces.push_back({out.reasoning, out.content});
  }
  ReasoningSplitter::Output out;
  splitter.Finish(&out);
  if (!out.reasoning.empty() || !out.content.empty())
    pieces.push_back({out.reasoning, out.content});
  return pieces;
}

Split Joined(const std::vector<Split>& pieces) {
  Split all;
  for (const Split& p : pieces) all.reasoning += p.reasoning, all.content += p.content;
  return all;
}

TEST(ReasoningSplitTest, ReasoningUpToTheTagThenTheReply) {
  // The newlines the template writes around the tag are not part of either.
  EXPECT_EQ(Whole("The sky scatters blue.\n</think>\n\nIt is blue."),
            (Split{"The sky scatters blue.", "It is blue."}));
  // A reply's own newlines after its first character stay; so do the reasoning's inside.
  EXPECT_EQ(Whole("\na\n\nb\n\n</think>\n\nx\n\ny\n"), (Split{"a\n\nb", "x\n\ny\n"}));
  EXPECT_EQ(Whole("</think>answer"), (Split{"", "answer"}));
  // Only the first tag ends the reasoning; a later one is the reply's text.
  EXPECT_EQ(Whole("r</think>a</think>b"), (Split{"r", "a</think>b"}));
}

TEST(ReasoningSplitTest, AnAnswerCutShortInItsReasoningIsAllReasoning) {
  EXPECT_EQ(Whole("still thinking\n\n"), (Split{"still thinking", ""}));
  // A tag never finished is text of the reasoning.
  EXPECT_EQ(Whole("almost\n</thi"), (Split{"almost\n</thi", ""}));
  EXPECT_EQ(Whole(""), (Split{"", ""}));
}

TEST(ReasoningSplitTest, TheTagSplitAcrossPiecesIsHeldUntilItIsCertain) {
  ReasoningSplitter splitter;
  ReasoningSplitter::Output out;
  splitter.Feed("Blue light scatters.\n</th", &out);
  EXPECT_EQ(out.reasoning, "Blue light scatters.");  // the newline and "</th" held
  EXPECT_FALSE(splitter.answering());
  splitter.Feed("ink>\n", &out);
  EXPECT_TRUE(splitter.answering());
  EXPECT_EQ(out.content, "");
  splitter.Feed("\nBlue.", &out);
  EXPECT_EQ(out.content, "Blue.");
  EXPECT_EQ(out.reasoning, "Blue light scatters.");

  // A held start that turns out not to be the tag is reasoning after all.
  ReasoningSplitter other;
  ReasoningSplitter::Output more;
  other.Feed("a </t", &more);
  EXPECT_EQ(more.reasoning, "a ");
  other.Feed("able>\n\n", &more);
  EXPECT_EQ(more.reasoning, "a </table>");
  other.Feed("b", &more);
  EXPECT_EQ(more.reasoning, "a </table>\n\nb");
}

TEST(ReasoningSplitTest, AnyPiecesGiveWhatTheWholeTextGives) {
  for (const std::string text : {"r\n</think>\n\nreply", "\n\nr</think>", "x</thinkx>\n</think>y",
                                 "<</think>>", "no tag\n", "r\n\n</think>\n\n\n"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(Joined(Bytewise(text)), Whole(text));
  }
  EXPECT_EQ(Whole("x</thinkx>\n</think>y"), (Split{"x</thinkx>", "y"}));
  EXPECT_EQ(Whole("<</think>>"), (Split{"<", ">"}));
}

}  // namespace
}  // namespace qvl
