// Reuse of KV pages across requests that share a prompt prefix: a follow-up question
// resends the whole conversation, and only its new tail needs a prefill.
//
// A page is identified by a hash chained over the keys of every token up to its end;
// a token's key is its id, or for an image pad token the image's content hash mixed with
// the pad's index, so the same text with a different image never matches. Only full
// pages are shared, and shared pages are never written: a sequence writes from the first
// page it does not share. The cache holds one reference to each page it knows; pages
// referenced by nobody else are evicted least recently used first when the pool runs dry.
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/kv_pool.h"

namespace qvl {

class PrefixCache {
 public:
  explicit PrefixCache(KvPool& pool) : pool_(pool) {}
  ~PrefixCache();
  PrefixCache(const PrefixCache&) = delete;
  PrefixCache& operator=(const PrefixCache&) = delete;

  // The pages holding the longest cached prefix of `keys` made of whole pages, at most
  // `max_pages`. Each returned page gets a reference for the caller.
  std::vector<int32_t> Match(std::span<const uint64_t> keys, int64_t max_pages);

  // Records the full pages of a sequence (its keys and block table) for later reuse.
  void Insert(std::span<const uint64_t> keys, std::span<const int32_t> pages);

  // Frees cached pages nobody else uses until `free_pages` pages are free or nothing is
  // left to evict. Returns whether the target was reached.
  bool EvictUntilFree(int64_t free_pages);

  int64_t size() const { return static_cast<int64_t>(entries_.size()); }
  int64_t evictable() const;

 private:
  // A cached page, known by its parent entry and its own tokens' keys. Both are compared
  // on lookup, so a hash collision can never hand one request another's KV.
  struct Entry {
    uint64_t map_key;
    uint64_t id;
    uint64_t parent;  // id of the previous page's entry; 0 for a first page
    std::vector<uint64_t> keys;
    int32_t page;
  };
  using Lru = std::list<Entry>;  // most recently used first

  // The entry for the page after `parent` holding `page_keys`, or lru_.end().
  Lru::iterator Lookup(uint64_t parent, std::span<const uint64_t> page_keys);

  KvPool& pool_;
  Lru lru_;
  std::unordered_map<uint64_t, Lru::iterator> entries_;
  uint64_t next_id_ = 1;
};

// Key of a text token.
inline uint64_t TextTokenKey(int32_t id) { return static_cast<uint32_t>(id); }
// Key of the i-th pad token of an image with content hash `image_hash` encoded as a
// grid_h x grid_w patch grid: the same image under another budget has other features.
uint64_t ImageTokenKey(uint64_t image_hash, int64_t grid_h, int64_t grid_w, int64_t index);

}  // namespace qvl
