#include "engine/image_budget_policy.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace qvl {
namespace {

constexpr int64_t kPerToken = 32 * 32;

ImageProcessorParams Qwen3VLParams() {
  ImageProcessorParams p;
  p.patch_size = 16;
  p.merge_size = 2;
  p.min_pixels = 64 * kPerToken;
  p.max_pixels = 16384 * kPerToken;
  return p;
}

std::string ErrorOf(const EngineOptions& options) {
  try {
    ResolveServerImageBudget(options, Qwen3VLParams());
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "no error";
}

TEST(ServerImageBudget, DefaultsAreSizedForACpu) {
  const ServerImageBudget b = ResolveServerImageBudget(EngineOptions(), Qwen3VLParams());
  EXPECT_EQ(b.min_pixels, 0);
  EXPECT_EQ(b.max_pixels, 1280 * kPerToken);
  EXPECT_EQ(b.low_pixels, 256 * kPerToken);
  EXPECT_EQ(b.high_pixels, 4096 * kPerToken);
}

TEST(ServerImageBudget, OperatorValuesInPixelsOrTokens) {
  EngineOptions o;
  o.max_image_tokens = 2048;
  o.min_pixels = 100 * kPerToken;
  ServerImageBudget b = ResolveServerImageBudget(o, Qwen3VLParams());
  EXPECT_EQ(b.max_pixels, 2048 * kPerToken);
  EXPECT_EQ(b.min_pixels, 100 * kPerToken);
  // A maximum above the high-detail default raises it; low never exceeds the maximum.
  o = EngineOptions();
  o.max_pixels = 8000 * kPerToken;
  b = ResolveServerImageBudget(o, Qwen3VLParams());
  EXPECT_EQ(b.high_pixels, 8000 * kPerToken);
  o = EngineOptions();
  o.max_image_tokens = 100;
  o.high_detail_image_tokens = 16384;
  b = ResolveServerImageBudget(o, Qwen3VLParams());
  EXPECT_EQ(b.low_pixels, 100 * kPerToken);
  EXPECT_EQ(b.high_pixels, 16384 * kPerToken);
  // The same bound twice, agreeing.
  o = EngineOptions();
  o.max_pixels = 500 * kPerToken;
  o.max_image_tokens = 500;
  EXPECT_EQ(ResolveServerImageBudget(o, Qwen3VLParams()).max_pixels, 500 * kPerToken);
}

TEST(ServerImageBudget, RefusesContradictions) {
  EngineOptions o;
  o.max_pixels = 1000000;
  o.max_image_tokens = 1000;
  EXPECT_EQ(ErrorOf(o),
            "the maximum image size is given twice and disagrees: 1000000 pixels, and 1000 image "
            "tokens = 1024000 pixels");
  o = EngineOptions();
  o.min_image_tokens = 2000;
  EXPECT_EQ(ErrorOf(o),
            "the minimum image size (2048000 pixels) is larger than the maximum (1310720)");
  o = EngineOptions();
  o.high_detail_image_tokens = -1;
  EXPECT_EQ(ErrorOf(o), "the high-detail image size must not be negative (0 pixels, -1 tokens)");
}

TEST(ImageBudgetFor, DetailPicksTheMaximum) {
  const ServerImageBudget server = ResolveServerImageBudget(EngineOptions(), Qwen3VLParams());
  const ImageBudgetRequest none;
  EXPECT_EQ(ImageBudgetFor(server, none, ImageDetail::kAuto).max_pixels, 1280 * kPerToken);
  EXPECT_EQ(ImageBudgetFor(server, none, ImageDetail::kLow).max_pixels, 256 * kPerToken);
  EXPECT_EQ(ImageBudgetFor(server, none, ImageDetail::kHigh).max_pixels, 4096 * kPerToken);
  EXPECT_EQ(ImageBudgetFor(server, none, ImageDetail::kAuto).min_pixels, 0);
}

TEST(ImageBudgetFor, TheRequestsOwnBoundsWinUpToTheHighDetailCeiling) {
  const ServerImageBudget server = ResolveServerImageBudget(EngineOptions(), Qwen3VLParams());
  ImageBudgetRequest r;
  r.max_pixels = 2000 * kPerToken;
  EXPECT_EQ(ImageBudgetFor(server, r, ImageDetail::kAuto).max_pixels, 2000 * kPerToken);
  EXPECT_EQ(ImageBudgetFor(server, r, ImageDetail::kHigh).max_pixels, 2000 * kPerToken);
  EXPECT_EQ(ImageBudgetFor(server, r, ImageDetail::kLow).max_pixels, 256 * kPerToken);
  r.max_pixels = 16384 * kPerToken;
  EXPECT_EQ(ImageBudgetFor(server, r, ImageDetail::kAuto).max_pixels, 4096 * kPerToken);
  // A minimum above the maximum it would get raises the maximum, within the ceiling.
  r = ImageBudgetRequest();
  r.min_pixels = 2000 * kPerToken;
  ImageBudget b = ImageBudgetFor(server, r, ImageDetail::kAuto);
  EXPECT_EQ(b.min_pixels, 2000 * kPerToken);
  EXPECT_EQ(b.max_pixels, 2000 * kPerToken);
  r.min_pixels = 9000 * kPerToken;
  b = ImageBudgetFor(server, r, ImageDetail::kAuto);
  EXPECT_EQ(b.min_pixels, 4096 * kPerToken);
  EXPECT_EQ(b.max_pixels, 4096 * kPerToken);
}

}  // namespace
}  // namespace qvl
