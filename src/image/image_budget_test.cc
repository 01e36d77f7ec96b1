#include "image/image_budget.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "image/image_limits.h"

namespace qvl {
namespace {

ImageProcessorParams Model() {
  ImageProcessorParams p;
  p.patch_size = 16;
  p.min_pixels = 65536;
  p.max_pixels = 16777216;
  return p;
}

TEST(ImageBudgetTest, OneTokenIs32x32Pixels) {
  EXPECT_EQ(PixelsPerImageToken(Model()), 1024);
  const ImageBudget budget = ImageBudgetFromTokens(64, 1280, Model());
  EXPECT_EQ(budget.min_pixels, 64 * 1024);
  EXPECT_EQ(budget.max_pixels, 1280 * 1024);
  EXPECT_THROW(ImageBudgetFromTokens(-1, 0, Model()), Error);
}

TEST(ImageBudgetTest, ZeroMeansTheModelsValue) {
  const PixelRange r = ResolveImageBudget({}, Model());
  EXPECT_EQ(r.min_pixels, 65536);
  EXPECT_EQ(r.max_pixels, 16777216);
}

TEST(ImageBudgetTest, ClampsIntoTheModelsRange) {
  PixelRange r = ResolveImageBudget({.min_pixels = 100000, .max_pixels = 1000000}, Model());
  EXPECT_EQ(r.min_pixels, 100000);
  EXPECT_EQ(r.max_pixels, 1000000);
  r = ResolveImageBudget({.min_pixels = 1, .max_pixels = int64_t{1} << 40}, Model());
  EXPECT_EQ(r.min_pixels, 65536);
  EXPECT_EQ(r.max_pixels, 16777216);
  // Only a cap below the model's minimum: both bounds end at the minimum.
  r = ResolveImageBudget({.max_pixels = 4096}, Model());
  EXPECT_EQ(r.min_pixels, 65536);
  EXPECT_EQ(r.max_pixels, 65536);
  // Only a floor above the model's maximum.
  r = ResolveImageBudget({.min_pixels = int64_t{1} << 30}, Model());
  EXPECT_EQ(r.min_pixels, 16777216);
  EXPECT_EQ(r.max_pixels, 16777216);
}

TEST(ImageBudgetTest, RejectsBadBounds) {
  try {
    ResolveImageBudget({.min_pixels = 5000000, .max_pixels = 100000}, Model());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(), "image min_pixels (5000000) is above max_pixels (100000)");
  }
  EXPECT_THROW(ResolveImageBudget({.min_pixels = -1}, Model()), Error);
}

TEST(ImageLimitsTest, DecodedSize) {
  try {
    CheckDecodedSize(20000, 20000, ImageLimits{}, "image 4");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
    EXPECT_STREQ(e.what(), "image 4 is 20000x20000 pixels; the limit is 67108864 pixels");
  }
  // Header fields whose product overflows 64 bits.
  EXPECT_THROW(CheckDecodedSize(int64_t{1} << 40, int64_t{1} << 40, ImageLimits{}, "x"), Error);
  EXPECT_THROW(CheckDecodedSize(0, 10, ImageLimits{}, "x"), Error);
}

}  // namespace
}  // namespace qvl
