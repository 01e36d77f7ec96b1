#include "engine/draft_lookup.h"

#include <gtest/gtest.h>

#include <vector>

namespace qvl {
namespace {

std::vector<int32_t> Draft(const std::vector<int32_t>& history, int max,
                           const std::vector<int32_t>& never = {}) {
  std::vector<int32_t> out(max);
  out.resize(LookupDraft(history, never, out));
  return out;
}

TEST(LookupDraft, ContinuesTheMostRecentEarlierOccurrenceOfTheLongestSuffix) {
  // The suffix [7, 8] occurs at 1 and at 6; the later one is followed by 3.
  EXPECT_EQ(Draft({5, 7, 8, 1, 2, 9, 7, 8, 3, 4, 0, 7, 8}, 3), (std::vector<int32_t>{3, 4, 0}));
  // [9, 7, 8] is longer than [7, 8] and wins although it is older.
  EXPECT_EQ(Draft({9, 7, 8, 1, 2, 6, 7, 8, 3, 4, 9, 7, 8}, 2), (std::vector<int32_t>{1, 2}));
}

TEST(LookupDraft, NeedsTwoTokensInCommonAndStopsAtTheHistoryEnd) {
  EXPECT_TRUE(Draft({1, 2, 3, 4, 3}, 4).empty());  // only [3] matches
  EXPECT_TRUE(Draft({}, 4).empty());
  EXPECT_TRUE(Draft({1, 2}, 4).empty());
  EXPECT_EQ(Draft({1, 2, 3, 1, 2}, 8), (std::vector<int32_t>{3, 1, 2}));
  EXPECT_TRUE(Draft({1, 2, 3, 1, 2}, 0).empty());
  // A run of one token repeats itself.
  EXPECT_EQ(Draft({4, 4, 4}, 5), (std::vector<int32_t>{4}));
}

TEST(LookupDraft, NeverDraftsImagePads) {
  EXPECT_EQ(Draft({1, 2, 3, 99, 99, 5, 1, 2}, 4, {99}), (std::vector<int32_t>{3}));
  // A match followed at once by a pad drafts nothing there and looks further back.
  EXPECT_EQ(Draft({1, 2, 6, 0, 1, 2, 99, 1, 2}, 4, {99}), (std::vector<int32_t>{6, 0, 1, 2}));
}

TEST(DraftLength, ShrinksToOneMoreThanWasKeptAndGrowsBackWhenAllIsKept) {
  DraftLength len;
  EXPECT_EQ(len.next(4), 4);
  len.Record(4, 1);
  EXPECT_EQ(len.next(4), 2);
  len.Record(2, 0);
  EXPECT_EQ(len.next(4), 1);
  len.Record(0, 0);  // nothing drafted says nothing
  EXPECT_EQ(len.next(4), 1);
  len.Record(1, 1);
  EXPECT_EQ(len.next(4), 4);
  EXPECT_EQ(len.next(0), 0);
}

}  // namespace
}  // namespace qvl
