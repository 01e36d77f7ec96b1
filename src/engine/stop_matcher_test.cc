#include "engine/stop_matcher.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace qvl {
namespace {

TEST(StopMatcher, PassesTextWithoutStops) {
  StopMatcher m({});
  EXPECT_EQ(m.Push("hello"), "hello");
  EXPECT_EQ(m.Flush(), "");
}

TEST(StopMatcher, HoldsBackPossibleStartAndCutsAtMatch) {
  StopMatcher m({"END", "\n\n"});
  EXPECT_EQ(m.Push("abc E"), "abc ");
  EXPECT_EQ(m.Push("N"), "");
  EXPECT_EQ(m.Push("X"), "ENX");  // not a stop after all
  EXPECT_EQ(m.Push("yz\n"), "yz");
  EXPECT_EQ(m.matched(), "");
  EXPECT_EQ(m.Push("\nmore"), "");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matched(), "\n\n");
  EXPECT_EQ(m.Push("after"), "");
}

TEST(StopMatcher, MatchSplitAcrossPiecesAndEarliestWins) {
  StopMatcher m({"world", "lo w"});
  EXPECT_EQ(m.Push("hel"), "he");  // "l" may begin "lo w"
  EXPECT_EQ(m.Push("lo wor"), "l");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matched(), "lo w");
}

// A stream stops as soon as a stop string is complete, so a stop that would end later is
// never reported, even one that starts earlier: the whole text fed at once must give what
// any pieces give (the fuzzer found "abcd" reported for the whole text, "bc" byte by byte).
TEST(StopMatcher, TheStopEndingFirstWinsWhateverThePieces) {
  for (const std::vector<std::string>& pieces : std::vector<std::vector<std::string>>{
           {"xabcd"}, {"x", "a", "b", "c", "d"}, {"xa", "bcd"}, {"xab", "cd"}}) {
    StopMatcher m({"abcd", "bc"});
    std::string shown;
    for (const std::string& piece : pieces) shown += m.Push(piece);
    EXPECT_EQ(shown, "xa") << pieces.size();
    EXPECT_TRUE(m.stopped());
    EXPECT_EQ(m.matched(), "bc") << pieces.size();
  }
}

// Of the stops ending at the same place the longest is reported, and the text cut before it.
TEST(StopMatcher, OfStopsEndingTogetherTheLongestWins) {
  StopMatcher m({"b", "ab"});
  EXPECT_EQ(m.Push("xab"), "x");
  EXPECT_EQ(m.matched(), "ab");
}

// Kept stops (include_stop_str_in_output) show every byte as it comes and end the text
// with the stop that completes first, whatever the pieces.
TEST(StopMatcher, KeptStopsHoldNothingBackAndEndTheText) {
  StopMatcher m({"END", "\n\n"}, /*keep_stop=*/true);
  EXPECT_EQ(m.Push("abc E"), "abc E");
  EXPECT_EQ(m.Push("N"), "N");
  EXPECT_EQ(m.Push("X E"), "X E");
  EXPECT_EQ(m.Push("ND more"), "ND");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matched(), "END");
  EXPECT_EQ(m.Push("after"), "");
  EXPECT_EQ(m.Flush(), "");

  for (const std::vector<std::string>& pieces : std::vector<std::vector<std::string>>{
           {"xabcd"}, {"x", "a", "b", "c", "d"}, {"xa", "bcd"}, {"xab", "cd"}}) {
    StopMatcher k({"abcd", "bc"}, /*keep_stop=*/true);
    std::string shown;
    for (const std::string& piece : pieces) shown += k.Push(piece);
    EXPECT_EQ(shown + k.Flush(), "xabc") << pieces.size();
    EXPECT_EQ(k.matched(), "bc") << pieces.size();
  }

  StopMatcher none({"zz"}, /*keep_stop=*/true);
  EXPECT_EQ(none.Push("az"), "az");
  EXPECT_EQ(none.Flush(), "");
}

TEST(StopMatcher, FlushReturnsHeldText) {
  StopMatcher m({"</answer>"});
  EXPECT_EQ(m.Push("x </ans"), "x ");
  EXPECT_EQ(m.Flush(), "</ans");
}

}  // namespace
}  // namespace qvl
