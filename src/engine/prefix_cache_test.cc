#include "engine/prefix_cache.h"

#include <gtest/gtest.h>

#include <vector>

namespace qvl {
namespace {

TextConfig TinyText() {
  TextConfig c;
  c.num_layers = 1;
  c.num_kv_heads = 1;
  c.head_dim = 4;
  return c;
}

std::vector<uint64_t> Keys(int n, int salt = 0) {
  std::vector<uint64_t> k;
  for (int i = 0; i < n; ++i) k.push_back(TextTokenKey(i * 7 + salt));
  return k;
}

TEST(PrefixCache, MatchesWholePagesOfTheLongestPrefix) {
  KvPool pool(TinyText(), DType::kF32, 16, 10 * 16 * 2 * 4 * 4);  // 10 pages of 16 tokens
  ASSERT_EQ(pool.num_pages(), 10);
  PrefixCache cache(pool);
  std::vector<int32_t> pages;
  for (int i = 0; i < 3; ++i) pages.push_back(pool.Allocate());
  const auto keys = Keys(43);  // 2 full pages + 11 tokens
  cache.Insert(keys, pages);
  EXPECT_EQ(cache.size(), 2);
  for (int32_t p : pages) pool.Release(p);
  EXPECT_EQ(pool.refcount(pages[0]), 1);  // held by the cache only

  // Same first 33 tokens, then different: two pages match.
  auto other = Keys(33);
  other.push_back(TextTokenKey(999));
  std::vector<int32_t> got = cache.Match(other, 100);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], pages[0]);
  EXPECT_EQ(got[1], pages[1]);
  EXPECT_EQ(pool.refcount(pages[0]), 2);
  // The cap on pages is honoured.
  EXPECT_EQ(cache.Match(other, 1).size(), 1u);
  pool.Release(pages[0]);

  // A change in the first page matches nothing.
  EXPECT_TRUE(cache.Match(Keys(48, 1), 100).empty());
  for (int32_t p : got) pool.Release(p);
}

TEST(PrefixCache, ImageKeysDistinguishImages) {
  EXPECT_NE(ImageTokenKey(1, 4, 6, 0), ImageTokenKey(2, 4, 6, 0));
  EXPECT_NE(ImageTokenKey(1, 4, 6, 0), ImageTokenKey(1, 4, 6, 1));
  // The same image at another size.
  EXPECT_NE(ImageTokenKey(1, 4, 6, 0), ImageTokenKey(1, 6, 4, 0));
  EXPECT_NE(ImageTokenKey(1, 4, 6, 0), ImageTokenKey(1, 8, 12, 0));
  EXPECT_NE(ImageTokenKey(1, 4, 6, 0) >> 63, 0u);
}

TEST(PrefixCache, EvictsOnlyUnusedPagesLeastRecentFirst) {
  KvPool pool(TinyText(), DType::kF32, 16, 4 * 16 * 2 * 4 * 4);  // 4 pages
  PrefixCache cache(pool);
  const int32_t a = pool.Allocate(), b = pool.Allocate();
  cache.Insert(Keys(16, 1), std::vector<int32_t>{a});
  cache.Insert(Keys(16, 2), std::vector<int32_t>{b});
  pool.Release(a);  // a: cache only
  // b is still used by its sequence, so only a can go.
  EXPECT_EQ(pool.free_pages(), 2);
  EXPECT_EQ(cache.evictable(), 1);
  EXPECT_FALSE(cache.EvictUntilFree(4));
  EXPECT_EQ(pool.free_pages(), 3);
  EXPECT_EQ(cache.size(), 1);
  pool.Release(b);
  EXPECT_TRUE(cache.EvictUntilFree(4));
  EXPECT_EQ(cache.size(), 0);
}

}  // namespace
}  // namespace qvl
