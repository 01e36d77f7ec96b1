#include "engine/prefix_cache.h"

#include <algorithm>

namespace qvl {
namespace {

// splitmix64 finalizer: a strong 64-bit mix for chaining.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The map key of a page: its parent entry's id and its tokens' keys, mixed.
uint64_t MapKey(uint64_t parent, std::span<const uint64_t> page_keys) {
  uint64_t h = Mix(parent ^ 0x51afd7ed558ccd00ull);
  for (uint64_t k : page_keys) h = Mix(h ^ k);
  return h;
}

}  // namespace

uint64_t ImageTokenKey(uint64_t image_hash, int64_t grid_h, int64_t grid_w, int64_t index) {
  const uint64_t grid = Mix(static_cast<uint64_t>(grid_h) << 32 ^ static_cast<uint64_t>(grid_w));
  // Text keys are below 2^32; image keys have the top bit set.
  return Mix(image_hash ^ grid ^ Mix(static_cast<uint64_t>(index))) | (uint64_t{1} << 63);
}

PrefixCache::~PrefixCache() {
  for (const Entry& e : lru_) pool_.Release(e.page);
}

PrefixCache::Lru::iterator PrefixCache::Lookup(uint64_t parent,
                                               std::span<const uint64_t> page_keys) {
  auto it = entries_.find(MapKey(parent, page_keys));
  if (it == entries_.end()) return lru_.end();
  const Entry& e = *it->second;
  if (e.parent != parent ||
      !std::equal(e.keys.begin(), e.keys.end(), page_keys.begin(), page_keys.end())) {
    return lru_.end();
  }
  return it->second;
}

std::vector<int32_t> PrefixCache::Match(std::span<const uint64_t> keys, int64_t max_pages) {
  std::vector<int32_t> pages;
  const int64_t page = pool_.page_size();
  uint64_t parent = 0;
  for (int64_t p = 0; p < max_pages && (p + 1) * page <= static_cast<int64_t>(keys.size()); ++p) {
    const Lru::iterator e = Lookup(parent, keys.subspan(p * page, page));
    if (e == lru_.end()) break;
    lru_.splice(lru_.begin(), lru_, e);  // now most recently used
    pool_.AddRef(e->page);
    pages.push_back(e->page);
    parent = e->id;
  }
  return pages;
}

void PrefixCache::Insert(std::span<const uint64_t> keys, std::span<const int32_t> pages) {
  const int64_t page = pool_.page_size();
  uint64_t parent = 0;
  for (size_t p = 0;
       p < pages.size() && static_cast<int64_t>(p + 1) * page <= static_cast<int64_t>(keys.size());
       ++p) {
    const std::span<const uint64_t> page_keys = keys.subspan(p * page, page);
    Lru::iterator e = Lookup(parent, page_keys);
    if (e == lru_.end()) {
      const uint64_t map_key = MapKey(parent, page_keys);
      if (entries_.count(map_key) != 0) return;  // a colliding entry: stop caching here
      pool_.AddRef(pages[p]);
      lru_.push_front(
          {map_key, next_id_++, parent, {page_keys.begin(), page_keys.end()}, pages[p]});
      e = lru_.begin();
      entries_[map_key] = e;
    } else {
      lru_.splice(lru_.begin(), lru_, e);
    }
    parent = e->id;
  }
}

bool PrefixCache::EvictUntilFree(int64_t free_pages) {
  for (auto it = lru_.end(); pool_.free_pages() < free_pages && it != lru_.begin();) {
    --it;
    if (pool_.refcount(it->page) != 1) continue;  // still used by a sequence
    pool_.Release(it->page);
    entries_.erase(it->map_key);
    it = lru_.erase(it);
  }
  return pool_.free_pages() >= free_pages;
}

int64_t PrefixCache::evictable() const {
  int64_t n = 0;
  for (const Entry& e : lru_) n += pool_.refcount(e.page) == 1 ? 1 : 0;
  return n;
}

}  // namespace qvl
