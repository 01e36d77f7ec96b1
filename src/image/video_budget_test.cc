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

// 8 frames, 1 pixel a token, 10 tokens of text: what a token bound leaves the frames.
constexpr ClipShape kClip{.frames = 8, .pixels_per_token = 1, .text_tokens = 10};

ImageBudget Clip(const VideoBudget& b, int64_t frames = 8) {
  ClipShape clip = kClip;
  clip.frames = frames;
  return ClipBudget(b, clip, "video 1");
}

TEST(VideoBudgetTest, TheServersDefaultWithoutARequest) {
  const VideoBudget b{.default_min_tokens = 100, .default_max_tokens = 1000, .limit_tokens = 5000};
  EXPECT_EQ(Clip(b).min_pixels, 90);
  EXPECT_EQ(Clip(b).max_pixels, 990);
  EXPECT_EQ(Clip({}).max_pixels, 0);  // the model's
}

TEST(VideoBudgetTest, ARequestIsCappedAtTheLimit) {
  VideoBudget b{.default_max_tokens = 1000, .limit_tokens = 5000};
  b.max_tokens = 3000;
  EXPECT_EQ(Clip(b).max_pixels, 2990);
  b.max_tokens = 9000;
  EXPECT_EQ(Clip(b).max_pixels, 4990);
  // A bound in pixels counts the frames alone; the limit still covers the text.
  b = {.max_pixels = 3000, .default_max_tokens = 1000, .limit_tokens = 5000};
  EXPECT_EQ(Clip(b).max_pixels, 3000);
  b.max_pixels = 9000;
  EXPECT_EQ(Clip(b).max_pixels, 4990);
  // Its minimum wins over the default maximum, up to the limit.
  b = {.min_tokens = 2000, .default_max_tokens = 1000, .limit_tokens = 5000};
  ImageBudget clip = Clip(b);
  EXPECT_EQ(clip.min_pixels, 1990);
  EXPECT_EQ(clip.max_pixels, 1990);
  b.min_tokens = 7000;
  clip = Clip(b);
  EXPECT_EQ(clip.min_pixels, 4990);
  EXPECT_EQ(clip.max_pixels, 4990);
}

TEST(VideoBudgetTest, FrameBoundsCountTheFramesSmartResizeCounts) {
  VideoBudget b{.default_max_tokens = 1 << 30, .limit_tokens = 1 << 30};
  b.max_frame_pixels = 1000;
  EXPECT_EQ(Clip(b).max_pixels, 8000);
  EXPECT_EQ(Clip(b, 5).max_pixels, 4000);  // round(5 / 2) * 2, half to even
  EXPECT_EQ(Clip(b, 7).max_pixels, 8000);
  // With a clip bound as well the tighter holds.
  b.max_pixels = 6000;
  EXPECT_EQ(Clip(b).max_pixels, 6000);
  EXPECT_EQ(Clip(b, 4).max_pixels, 4000);
  b = {.default_max_tokens = 1 << 20, .limit_tokens = 1 << 20};
  b.min_frame_pixels = 300;
  EXPECT_EQ(Clip(b, 6).min_pixels, 1800);
  b.max_frame_pixels = int64_t{1} << 62;  // saturates, then the limit caps it
  EXPECT_EQ(Clip(b, 6).max_pixels, (1 << 20) - 10);
}

// 8 frames are 4 pairs: 10 tokens of text and one token each at the least.
TEST(VideoBudgetTest, AMaximumBelowTheTextAndATokenPerPairIsRefused) {
  EXPECT_EQ(Clip({.max_tokens = 14}).max_pixels, 4);
  try {
    Clip({.max_tokens = 13, .limit_tokens = 100});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(),
                 "video 1: its 8 sampled frames take at least 14 tokens (10 for the timestamps "
                 "and vision markers of its 4 frame pairs, one per pair for the frames), more "
                 "than its video budget of 13 tokens; sample at most about 6 frames "
                 "(max_frames, num_frames or fps) or raise max_video_tokens");
  }
  // At the server's limit raising it is no use; the default is refused the same way.
  try {
    Clip({.max_tokens = 50, .default_max_tokens = 12, .limit_tokens = 12});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("budget of 12 tokens; sample at most about 6 frames "
                                         "(max_frames, num_frames or fps)"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("raise"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Clip({.default_max_tokens = 13}), Error);
}

TEST(VideoBudgetTest, NegativeValuesAreRefused) {
  EXPECT_THROW(Clip({.max_frame_pixels = -1}), Error);
  EXPECT_THROW(Clip({.max_tokens = -1}), Error);
}

}  // namespace
}  // namespace qvl
