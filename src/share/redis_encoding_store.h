// SharedEncodingStore on Redis. Key: PREFIX enc:MODEL:IMAGE:HxW, where MODEL names the
// model's weights, weight formats and kernel numerics (see share/model_identity.h),
// IMAGE the image's content hash and HxW the patch grid its preprocessing gave; the
// value is an encoding_codec value (version, key check, checksum). Lookups wait at most
// the client's timeout plus 5 ms per MB of the encoding expected; writes go through a
// BackgroundWriter.
//
// A replica does not fetch an encoding it has itself stored or fetched recently (kept
// in a first-in-first-out key list sized like its local image cache): it has it in that
// cache, and a follow-up must not pay a network round trip for what is in memory. When
// the local cache has dropped it after all, the engine encodes again.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "engine/shared_encoding_store.h"
#include "share/background_writer.h"
#include "share/encoding_codec.h"
#include "share/redis_client.h"
#include "share/shared_cache_counters.h"

namespace qvl {

struct EncodingStoreOptions {
  std::string key_prefix = "qvl:";
  std::string model_key;  // see ModelIdentity
  int64_t dim = 0;        // decoder hidden size
  size_t deepstack_layers = 0;
  int merge_size = 2;
  size_t local_cache_bytes = size_t{256} << 20;  // the engine's image cache budget
  size_t max_pending_bytes = size_t{256} << 20;  // encodings waiting to be written
  // Larger encodings (over 4,096 tokens for the 2B model) are not shared: a lookup would
  // take longer than a short timeout allows, and Redis refuses values over 512 MiB.
  size_t max_value_bytes = size_t{128} << 20;
  std::chrono::milliseconds write_timeout{2000};
};

class RedisEncodingStore : public SharedEncodingStore {
 public:
  RedisEncodingStore(std::shared_ptr<RedisClient> client, EncodingStoreOptions options,
                     SharedCacheCounters* counters);

  std::shared_ptr<const VisionOutput> Find(const ImageKey& key) override;
  void Offer(const ImageKey& key, std::shared_ptr<const VisionOutput> value) override;

  std::string RedisKey(const ImageKey& key) const;
  // Waits for queued writes (tests).
  void Flush() { writer_.Flush(); }

 private:
  // Remembers `key` as held in the local cache; false if it already was.
  bool MarkLocal(const std::string& key, size_t bytes);
  bool IsLocal(const std::string& key);
  void Forget(const std::string& key);

  std::shared_ptr<RedisClient> client_;
  EncodingStoreOptions options_;
  SharedCacheCounters* counters_;
  std::mutex mu_;
  std::list<std::pair<std::string, size_t>> local_;  // newest first
  std::unordered_map<std::string, std::list<std::pair<std::string, size_t>>::iterator> local_index_;
  size_t local_bytes_ = 0;
  BackgroundWriter writer_;  // last: its thread stops before the rest goes
};

}  // namespace qvl
