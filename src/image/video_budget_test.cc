#include "image/video_budget.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace qvl {
namespace {

TEST(VideoBudgetTest, OneTokenIsAFramePairOf32x32Pixels) {
  ImageProcessorParams p;
  p.patch_size = 16;
  EXPECT_EQ(PixelsPerVideoToken(p), 2 * 32 * 32);
  p.temporal_patch_size = 1;
  EXPECT_EQ(PixelsPerVideoToken(p), 32 * 32);
}

TEST(VideoBudgetTest, TheServersDefaultWithoutARequest) {
  const VideoBudget b{.default_min_pixels = 100, .default_max_pixels = 1000, .limit_pixels = 5000};
  const ImageBudget clip = ClipBudget(b, 8, 2);
  EXPECT_EQ(clip.min_pixels, 100);
  EXPECT_EQ(clip.max_pixels, 1000);
  EXPECT_EQ(ClipBudget({}, 8, 2).max_pixels, 0);  // the model's
}

TEST(VideoBudgetTest, ARequestIsCappedAtTheLimit) {
  VideoBudget b{.default_max_pixels = 1000, .limit_pixels = 5000};
  b.max_pixels = 3000;
  EXPECT_EQ(ClipBudget(b, 8, 2).max_pixels, 3000);
  b.max_pixels = 9000;
  EXPECT_EQ(ClipBudget(b, 8, 2).max_pixels, 5000);
  // Its minimum wins over the default maximum, up to the limit.
  b.max_pixels = 0;
  b.min_pixels = 2000;
  ImageBudget clip = ClipBudget(b, 8, 2);
  EXPECT_EQ(clip.min_pixels, 2000);
  EXPECT_EQ(clip.max_pixels, 2000);
  b.min_pixels = 7000;
  clip = ClipBudget(b, 8, 2);
  EXPECT_EQ(clip.min_pixels, 5000);
  EXPECT_EQ(clip.max_pixels, 5000);
}

TEST(VideoBudgetTest, FrameBoundsCountTheFramesSmartResizeCounts) {
  VideoBudget b{.default_max_pixels = 1 << 30, .limit_pixels = 1 << 30};
  b.max_frame_pixels = 1000;
  EXPECT_EQ(ClipBudget(b, 8, 2).max_pixels, 8000);
  EXPECT_EQ(ClipBudget(b, 5, 2).max_pixels, 4000);  // round(5 / 2) * 2, half to even
  EXPECT_EQ(ClipBudget(b, 7, 2).max_pixels, 8000);
  // With a clip bound as well the tighter holds.
  b.max_pixels = 6000;
  EXPECT_EQ(ClipBudget(b, 8, 2).max_pixels, 6000);
  EXPECT_EQ(ClipBudget(b, 4, 2).max_pixels, 4000);
  b = {.default_max_pixels = 1 << 20, .limit_pixels = 1 << 20};
  b.min_frame_pixels = 300;
  EXPECT_EQ(ClipBudget(b, 6, 2).min_pixels, 1800);
  b.max_frame_pixels = int64_t{1} << 62;  // saturates, then the limit caps it
  EXPECT_EQ(ClipBudget(b, 6, 2).max_pixels, 1 << 20);
}

TEST(VideoBudgetTest, NegativeValuesAreRefused) {
  EXPECT_THROW(ClipBudget({.max_frame_pixels = -1}, 4, 2), Error);
}

}  // namespace
}  // namespace qvl
