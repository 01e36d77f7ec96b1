#include "share/redis_encoding_store.h"

#include <cstdio>

#include "base/error.h"

namespace qvl {
namespace {

// What a lookup's timeout allows for the transfer on top of the round trip: 200 MB/s,
// slower than any LAN, so only a Redis that is really slow or gone times out.
constexpr size_t kTransferBytesPerMs = 200 * 1000;

size_t EncodingBytes(const VisionOutput& v) {
  size_t floats = v.embeds.size();
  for (const std::vector<float>& layer : v.deepstack) floats += layer.size();
  return floats * sizeof(float);
}

}  // namespace

RedisEncodingStore::RedisEncodingStore(std::shared_ptr<RedisClient> client,
                                       EncodingStoreOptions options, SharedCacheCounters* counters)
    : client_(client),
      options_(std::move(options)),
      counters_(counters),
      writer_(client, options_.max_pending_bytes, options_.write_timeout) {}

std::string RedisEncodingStore::RedisKey(const ImageKey& key) const {
  char image[17];
  std::snprintf(image, sizeof(image), "%016llx", static_cast<unsigned long long>(key.content_hash));
  return StrCat(options_.key_prefix, "enc:", options_.model_key, ":", image, ":", key.grid_h, "x",
                key.grid_w);
}

bool RedisEncodingStore::MarkLocal(const std::string& key, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (local_index_.count(key)) return false;
  local_.emplace_front(key, bytes);
  local_index_[key] = local_.begin();
  local_bytes_ += bytes;
  while (local_bytes_ > options_.local_cache_bytes && local_.size() > 1) {
    local_bytes_ -= local_.back().second;
    local_index_.erase(local_.back().first);
    local_.pop_back();
  }
  return true;
}

void RedisEncodingStore::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = local_index_.find(key);
  if (it == local_index_.end()) return;
  local_bytes_ -= it->second->second;
  local_.erase(it->second);
  local_index_.erase(it);
}

bool RedisEncodingStore::IsLocal(const std::string& key) {
  // Not moved to the front: the engine's cache is not touched for an image whose tokens
  // are in a cached prefix, so a key asked for often may have left it. First in, first
  // out errs towards a fetch (milliseconds) rather than an encode (seconds).
  std::lock_guard<std::mutex> lock(mu_);
  return local_index_.count(key) > 0;
}

std::shared_ptr<const VisionOutput> RedisEncodingStore::Find(const ImageKey& key) {
  const std::string redis_key = RedisKey(key);
  if (IsLocal(redis_key)) return nullptr;
  const int64_t merge = options_.merge_size;
  EncodingShape shape;
  shape.tokens = key.grid_h * key.grid_w / (merge * merge);
  shape.dim = options_.dim;
  shape.deepstack_layers = options_.deepstack_layers;
  const size_t bytes =
      static_cast<size_t>(shape.tokens * shape.dim) * (1 + shape.deepstack_layers) * sizeof(float);
  if (bytes > options_.max_value_bytes) return nullptr;  // never stored
  std::optional<std::string> value =
      client_->Get(redis_key, std::chrono::milliseconds(bytes / kTransferBytesPerMs));
  if (!value) {
    ++counters_->image_misses;
    return nullptr;
  }
  std::optional<VisionOutput> out = DecodeVisionOutput(redis_key, *value, shape);
  if (!out) {
    ++counters_->image_rejected;
    return nullptr;
  }
  ++counters_->image_hits;
  MarkLocal(redis_key, EncodingBytes(*out));
  return std::make_shared<const VisionOutput>(std::move(*out));
}

void RedisEncodingStore::Offer(const ImageKey& key, std::shared_ptr<const VisionOutput> value) {
  std::string redis_key = RedisKey(key);
  const size_t bytes = EncodingBytes(*value);
  if (bytes > options_.max_value_bytes) {
    ++counters_->image_dropped;
    return;
  }
  if (!MarkLocal(redis_key, bytes)) return;
  std::string value_key = redis_key;
  writer_.Post(
      std::move(redis_key), bytes,
      [value = std::move(value), value_key] { return EncodeVisionOutput(value_key, *value); },
      [this, forget = value_key](bool written) {
        ++(written ? counters_->image_stores : counters_->image_dropped);
        // Unwritten: the next encoding of this image offers it again.
        if (!written) Forget(forget);
      });
}

}  // namespace qvl
