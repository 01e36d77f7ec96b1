#include "model/visual_features.h"

#include <gtest/gtest.h>

namespace qvl {
namespace {

TEST(VisualFeatures, RowsPointIntoEachLevelOfTheEncoding) {
  VisionOutput vis;
  vis.tokens = 2;
  vis.embeds = {1, 2, 3, 4, 5, 6};  // 2 tokens x d = 3
  vis.deepstack = {{10, 11, 12, 13, 14, 15}, {20, 21, 22, 23, 24, 25}};
  VisualFeatures f;
  AppendVisualFeatures(&vis, vis.tokens, 3, 2, &f);
  ASSERT_EQ(f.embeds.size(), 2u);
  ASSERT_EQ(f.deepstack.size(), 2u);
  EXPECT_EQ(f.embeds[1][0], 4.0f);
  EXPECT_EQ(f.deepstack[0][1][2], 15.0f);
  EXPECT_EQ(f.deepstack[1][0][1], 21.0f);
}

TEST(VisualFeatures, ImagesFollowOneAnotherAndCachedOnesGetNullRows) {
  VisionOutput first, third;
  first.tokens = 1;
  first.embeds = {1, 2};
  first.deepstack = {{3, 4}};
  third.tokens = 2;
  third.embeds = {5, 6, 7, 8};
  third.deepstack = {{9, 10, 11, 12}};
  VisualFeatures f;
  AppendVisualFeatures(&first, 1, 2, 1, &f);
  AppendVisualFeatures(nullptr, 3, 2, 1, &f);
  AppendVisualFeatures(&third, 2, 2, 1, &f);
  ASSERT_EQ(f.embeds.size(), 6u);
  ASSERT_EQ(f.deepstack[0].size(), 6u);
  EXPECT_EQ(f.embeds[0][1], 2.0f);
  for (int k = 1; k < 4; ++k) {
    EXPECT_EQ(f.embeds[k], nullptr) << k;
    EXPECT_EQ(f.deepstack[0][k], nullptr) << k;
  }
  EXPECT_EQ(f.embeds[5][0], 7.0f);
  EXPECT_EQ(f.deepstack[0][4][1], 10.0f);
}

}  // namespace
}  // namespace qvl
