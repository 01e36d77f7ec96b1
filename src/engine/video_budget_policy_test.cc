#include "engine/video_budget_policy.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "image/smart_resize.h"
#include "image/video_processor.h"
#include "text/test_tokenizer.h"

namespace qvl {
namespace {

// video_preprocessor_config.json of Qwen3-VL-2B-Instruct.
VideoProcessorParams Qwen3VLVideoParams() {
  VideoProcessorParams p;
  p.image.patch_size = 16;
  p.image.merge_size = 2;
  p.image.temporal_patch_size = 2;
  p.image.min_pixels = 4096;
  p.image.max_pixels = 25165824;
  return p;
}

constexpr int64_t kPerToken = 2 * 32 * 32;

TEST(ServerVideoBudget, DefaultsAreSizedForACpu) {
  const ServerVideoBudget b = ResolveServerVideoBudget(EngineOptions());
  EXPECT_EQ(b.min_tokens, 0);
  EXPECT_EQ(b.max_tokens, 2048);
  EXPECT_EQ(b.limit_tokens, 8192);
}

TEST(ServerVideoBudget, OperatorValues) {
  EngineOptions o;
  o.min_video_tokens = 16;
  o.max_video_tokens = 512;
  o.video_token_limit = 1024;
  ServerVideoBudget b = ResolveServerVideoBudget(o);
  EXPECT_EQ(b.min_tokens, 16);
  EXPECT_EQ(b.max_tokens, 512);
  EXPECT_EQ(b.limit_tokens, 1024);
  o.max_video_tokens = 4096;  // the limit is never below the default
  b = ResolveServerVideoBudget(o);
  EXPECT_EQ(b.limit_tokens, 4096);
  o.min_video_tokens = 5000;
  try {
    ResolveServerVideoBudget(o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(),
                 "the minimum video budget (5000 tokens) is larger than the maximum (4096 tokens)");
  }
  o = {};
  o.max_video_tokens = -1;
  EXPECT_THROW(ResolveServerVideoBudget(o), Error);
}

// A 10 s 720p clip at 30 fps samples 20 frames: the model's budget makes it ~9,000
// tokens, the server's default at most 2048 with its timestamps, a request up to the
// limit. Its 10 pairs at 0.5 s, 1.5 s, ... 9.5 s cost 10 x ("<", "0", ".", "5",
// " seconds", ">" and the two vision markers) = 80 tokens of text.
TEST(VideoBudgetFor, A720pClipFollowsTheBudget) {
  const VideoProcessorParams params = Qwen3VLVideoParams();
  const ServerVideoBudget server = ResolveServerVideoBudget(EngineOptions());
  std::vector<double> pair_seconds;
  for (int g = 0; g < 10; ++g) pair_seconds.push_back(g + 0.5);
  auto tokens = [&](const VideoBudgetRequest& request) {
    const VideoBudget budget = VideoBudgetFor(server, request, QwenTokenizerForTest());
    const int64_t text = budget.text_tokens(pair_seconds);
    EXPECT_EQ(text, 80);
    const ImageBudget clip = ClipBudget(budget, {20, 2, kPerToken, text}, "video 1");
    const PixelRange range = ResolveImageBudget(clip, params.image);
    const ImageSize s =
        SmartResizeVideo({1280, 720}, 20, 2, 32, range.min_pixels, range.max_pixels, "video 1");
    return 10 * (s.width / 32) * (s.height / 32);
  };
  const ImageSize full =
      SmartResizeVideo({1280, 720}, 20, 2, 32, 4096, params.image.max_pixels, "video 1");
  EXPECT_GT(10 * (full.width / 32) * (full.height / 32), 8000);
  const int64_t by_default = tokens({});
  EXPECT_LE(by_default, 2048 - 80);
  EXPECT_GT(by_default, 1500);
  EXPECT_LE(tokens({.max_tokens = 512}), 512 - 80);
  const int64_t capped = tokens({.max_tokens = 100000});
  EXPECT_LE(capped, 8192 - 80);
  EXPECT_GT(capped, 6000);
  // The reference's pixel bound over all frames counts the frames alone.
  EXPECT_LE(tokens({.max_pixels = 512 * kPerToken}), 512);
  EXPECT_GT(tokens({.max_pixels = 512 * kPerToken}), 512 - 80);
  // A per-frame maximum of 320 x 180 pixels: 10 pairs of 10 x 5 tokens.
  EXPECT_EQ(tokens({.max_frame_pixels = 320 * 180}), 10 * 10 * 5);
}

}  // namespace
}  // namespace qvl
