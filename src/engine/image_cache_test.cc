#include "engine/image_cache.h"

#include <gtest/gtest.h>

namespace qvl {
namespace {

std::shared_ptr<const VisionOutput> Output(size_t floats) {
  auto v = std::make_shared<VisionOutput>();
  v->embeds.assign(floats, 1.0f);
  return v;
}

TEST(ImageCache, FindsByContentAndGridAndEvictsLeastRecent) {
  ImageCache cache(1000);                // bytes
  cache.Insert({1, 2, 2}, Output(100));  // 400 bytes
  cache.Insert({2, 2, 2}, Output(100));
  EXPECT_NE(cache.Find({1, 2, 2}), nullptr);  // now most recent
  EXPECT_EQ(cache.Find({1, 4, 4}), nullptr);  // other grid: other preprocessing
  cache.Insert({3, 2, 2}, Output(100));       // evicts key 2
  EXPECT_EQ(cache.Find({2, 2, 2}), nullptr);
  EXPECT_NE(cache.Find({1, 2, 2}), nullptr);
  EXPECT_NE(cache.Find({3, 2, 2}), nullptr);
  EXPECT_EQ(cache.bytes(), 800u);
  cache.Insert({4, 2, 2}, Output(1000));  // larger than the cache: not kept
  EXPECT_EQ(cache.Find({4, 2, 2}), nullptr);
}

}  // namespace
}  // namespace qvl
