#include "engine/stop_matcher.h"

#include <gtest/gtest.h>

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

// Two stops matching at the same place: the first listed is the one reported.
TEST(StopMatcher, ATieIsTheFirstListed) {
  StopMatcher m({"ab", "a"});
  EXPECT_EQ(m.Push("xab"), "x");
  EXPECT_EQ(m.matched(), "ab");
}

TEST(StopMatcher, FlushReturnsHeldText) {
  StopMatcher m({"</answer>"});
  EXPECT_EQ(m.Push("x </ans"), "x ");
  EXPECT_EQ(m.Flush(), "</ans");
}

}  // namespace
}  // namespace qvl
