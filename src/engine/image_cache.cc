#include "engine/image_cache.h"

namespace qvl {
namespace {

size_t BytesOf(const VisionOutput& v) {
  size_t n = v.embeds.size();
  for (const auto& d : v.deepstack) n += d.size();
  return n * sizeof(float);
}

}  // namespace

std::shared_ptr<const VisionOutput> ImageCache::Find(const ImageKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->value;
}

void ImageCache::Insert(const ImageKey& key, std::shared_ptr<const VisionOutput> value) {
  const size_t size = BytesOf(*value);
  std::lock_guard<std::mutex> lock(mu_);
  if (size > max_bytes_ || entries_.count(key) != 0) return;
  while (bytes_ + size > max_bytes_ && !lru_.empty()) {
    bytes_ -= lru_.back().bytes;
    entries_.erase(lru_.back().key);
    lru_.pop_back();
  }
  lru_.push_front({key, std::move(value), size});
  entries_[key] = lru_.begin();
  bytes_ += size;
}

size_t ImageCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

size_t ImageCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace qvl
