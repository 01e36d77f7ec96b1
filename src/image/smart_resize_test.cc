#include "image/smart_resize.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace qvl {
namespace {

constexpr int64_t kMin = 65536, kMax = 16777216;

ImageSize Resize(int width, int height, int64_t min_pixels = kMin, int64_t max_pixels = kMax) {
  return SmartResize({width, height}, 32, min_pixels, max_pixels, "image 1");
}

std::string ErrorOf(int width, int height) {
  try {
    Resize(width, height);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "no error";
}

// The sizes of the fixture cases (meta.json resized_hw).
TEST(SmartResizeTest, FixtureSizes) {
  EXPECT_EQ(Resize(320, 240), (ImageSize{320, 256}));
  EXPECT_EQ(Resize(200, 330), (ImageSize{224, 352}));  // area below min_pixels: upscaled
  EXPECT_EQ(Resize(400, 208), (ImageSize{384, 192}));  // 12.5 and 6.5 round half to even
  EXPECT_EQ(Resize(256, 320), (ImageSize{256, 320}));
  EXPECT_EQ(Resize(40, 700), (ImageSize{64, 1088}));
  EXPECT_EQ(Resize(48, 40), (ImageSize{288, 256}));
  EXPECT_EQ(Resize(1024, 768), (ImageSize{1024, 768}));
}

TEST(SmartResizeTest, RoundsHalfToEven) {
  EXPECT_EQ(Resize(16 * 32 + 16, 15 * 32 + 16), (ImageSize{512, 512}));  // 16.5 -> 16, 15.5 -> 16
  EXPECT_EQ(Resize(17 * 32 + 16, 17 * 32 + 17), (ImageSize{576, 576}));  // 17.5 -> 18, 17.53 -> 18
}

// Values from transformers' smart_resize (bench/pillow_preprocess.py).
TEST(SmartResizeTest, ShrinksToMaxPixels) {
  EXPECT_EQ(Resize(320, 240, kMin, 65536), (ImageSize{288, 192}));
  EXPECT_EQ(Resize(4000, 3000, kMin, 1003520), (ImageSize{1152, 864}));
  EXPECT_EQ(Resize(20000, 100, kMin, kMax), (ImageSize{20000, 96}));
  // The floor can reach 0 for thin images with a small budget; transformers keeps one
  // factor instead.
  EXPECT_EQ(Resize(6400, 32, 1024, 4096), (ImageSize{896, 32}));
}

TEST(SmartResizeTest, RefusesTinyAndThinImages) {
  EXPECT_EQ(ErrorOf(1, 1), "image 1 is 1x1 pixels; both sides must be at least 32 pixels");
  EXPECT_EQ(ErrorOf(31, 1000), "image 1 is 31x1000 pixels; both sides must be at least 32 pixels");
  EXPECT_EQ(ErrorOf(1, 10000), "image 1 is 1x10000 pixels; both sides must be at least 32 pixels");
  EXPECT_EQ(ErrorOf(32, 6401),
            "image 1 is 32x6401 pixels; the longer side may be at most 200 times the shorter one");
  EXPECT_EQ(ErrorOf(32, 6400), "no error");
}

}  // namespace
}  // namespace qvl
