#include "server/body_limit.h"

#include <gtest/gtest.h>

namespace qvl {
namespace {

TEST(BodyLimit, RoomForEveryImageAndOneVideoAsBase64AndTheTextThatFits) {
  // 8 x 16 MiB + 256 MiB as base64 + 16384 tokens x 384 bytes x 3 (JSON) + 1 MiB.
  EXPECT_EQ(DefaultMaxBodyBytes(EngineOptions()), size_t{198879936 + 357913944});
  EngineOptions small;
  small.max_images_per_request = 4;
  small.max_image_bytes = size_t{1} << 20;
  small.video_limits.max_encoded_bytes = int64_t{1} << 20;
  small.context_tokens = 4096;
  EXPECT_EQ(DefaultMaxBodyBytes(small), size_t{11359584 + 1398104});
  // Raising a limit raises the body limit with it.
  small.max_images_per_request = 5;
  EXPECT_EQ(DefaultMaxBodyBytes(small), size_t{11359584 + 2 * 1398104});
  // A server without videos keeps no room for one.
  small.video_limits.max_videos_per_request = 0;
  EXPECT_EQ(DefaultMaxBodyBytes(small), size_t{11359584 + 1398104});
}

}  // namespace
}  // namespace qvl
