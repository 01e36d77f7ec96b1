#include "engine/media_memo.h"

#include <gtest/gtest.h>

#include "engine/content_hash.h"
#include "engine/video_preparer.h"

namespace qvl {
namespace {

PreparedImage Prepared(uint64_t content_hash) {
  PreparedImage img;
  img.content_hash = content_hash;
  img.grid = {1, 4, 6};
  img.info.tokens = 6;
  img.pixels.assign(24 * 1536, 0.5f);
  return img;
}

TEST(MediaMemo, KeepsAllButThePixels) {
  MediaMemo memo(4);
  memo.Insert(7, Prepared(42), {{0.5, 1.5}, 6});
  const std::optional<PreparedMedia> found = memo.Find(7);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->visual.content_hash, 42u);
  EXPECT_EQ(found->visual.grid.w, 6);
  EXPECT_EQ(found->visual.info.tokens, 6);
  EXPECT_TRUE(found->visual.pixels.empty());
  EXPECT_EQ(found->layout.timestamps, (std::vector<double>{0.5, 1.5}));
  EXPECT_FALSE(memo.Find(8).has_value());
}

TEST(MediaMemo, TheLeastRecentlyUsedGoesFirst) {
  MediaMemo memo(2);
  memo.Insert(1, Prepared(1), {});
  memo.Insert(2, Prepared(2), {});
  ASSERT_TRUE(memo.Find(1).has_value());  // 2 is now the least recently used
  memo.Insert(3, Prepared(3), {});
  EXPECT_TRUE(memo.Find(1).has_value());
  EXPECT_FALSE(memo.Find(2).has_value());
  EXPECT_TRUE(memo.Find(3).has_value());
}

TEST(MediaMemo, KeysFollowTheBytesAndWhatShapedThePreparation) {
  const std::vector<uint8_t> bytes = {1, 2, 3}, other = {1, 2, 4};
  const auto image_key = [](const std::vector<uint8_t>& b, const ImageBudget& budget) {
    return ImageMemoKey(ContentHash(b), budget);
  };
  EXPECT_EQ(image_key(bytes, {0, 1 << 20}), image_key(bytes, {0, 1 << 20}));
  EXPECT_NE(image_key(bytes, {0, 1 << 20}), image_key(other, {0, 1 << 20}));
  EXPECT_NE(image_key(bytes, {0, 1 << 20}), image_key(bytes, {0, 1 << 19}));
  const auto video_key = [](const VideoInput& v, const VideoBudget& budget) {
    return VideoMemoKey(VideoBytesHash(v), v, budget);
  };

  VideoInput clip;
  clip.file = bytes;
  const uint64_t key = video_key(clip, {});
  EXPECT_EQ(key, video_key(clip, {}));
  VideoInput sampled = clip;
  sampled.num_frames = 4;
  EXPECT_NE(key, video_key(sampled, {}));
  VideoBudget budget;
  budget.max_frame_pixels = 65536;
  EXPECT_NE(key, video_key(clip, budget));
  EXPECT_NE(key, video_key(clip, {.max_tokens = 512}));
  VideoInput frames;
  frames.frames = {bytes};
  EXPECT_NE(key, video_key(frames, {}));
  // The file's bytes are not the video's frames.
  EXPECT_NE(image_key(bytes, {}), key);
}

}  // namespace
}  // namespace qvl
