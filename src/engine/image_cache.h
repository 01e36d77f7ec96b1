// Vision encodings kept for reuse: the same image asked about again (a follow-up, or a
// new question about it) skips the vision tower. Keyed by the image's content hash and
// the preprocessing that fixed its grid; bounded in bytes, least recently used first out.
// Thread-safe: the engine thread fills it, and the submitting threads look up the
// encodings of media they need not decode again (see MediaMemo).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "model/vision_tower.h"

namespace qvl {

struct ImageKey {
  uint64_t content_hash = 0;
  int64_t grid_h = 0, grid_w = 0;  // the preprocessing result that matters
  bool operator==(const ImageKey&) const = default;
};

class ImageCache {
 public:
  explicit ImageCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  std::shared_ptr<const VisionOutput> Find(const ImageKey& key);
  void Insert(const ImageKey& key, std::shared_ptr<const VisionOutput> value);

  size_t bytes() const;
  size_t size() const;

 private:
  struct KeyHash {
    size_t operator()(const ImageKey& k) const {
      return static_cast<size_t>(k.content_hash ^ (k.grid_h * 0x9e3779b97f4a7c15ull) ^ k.grid_w);
    }
  };
  struct Entry {
    ImageKey key;
    std::shared_ptr<const VisionOutput> value;
    size_t bytes;
  };

  mutable std::mutex mu_;
  size_t max_bytes_;
  size_t bytes_ = 0;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<ImageKey, std::list<Entry>::iterator, KeyHash> entries_;
};

}  // namespace qvl
