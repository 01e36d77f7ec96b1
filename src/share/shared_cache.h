// The caches one replica shares with the others through Redis (`qvl serve --redis URL`):
// the Redis client, the fault and hit counters, the background writer and the key
// scheme. Made before the model loads (so /metrics has the counters from the start);
// AttachModel then fixes which model's values it reads and writes.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "engine/shared_encoding_store.h"
#include "model/qwen3vl.h"
#include "share/background_writer.h"
#include "share/redis_client.h"
#include "share/shared_cache_counters.h"

namespace qvl {

struct SharedCacheOptions {
  std::string url;            // redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]
  std::string password_file;  // overrides the URL's password; whitespace trimmed
  std::string key_prefix = "qvl:";
  std::chrono::milliseconds timeout{300};  // per lookup
  std::chrono::milliseconds write_timeout{5000};
  size_t local_image_cache_bytes = size_t{256} << 20;
  size_t max_pending_bytes = size_t{512} << 20;  // values waiting to be written
};

class SharedCache {
 public:
  // Throws Error(kInvalidArgument) for a bad URL, Error(kIo) for an unreadable password
  // file. Does not connect: a Redis that is down now is a fault later, not a failure.
  explicit SharedCache(SharedCacheOptions options);

  // Once the model is loaded, before requests arrive: the store for EngineOptions.
  std::shared_ptr<SharedEncodingStore> AttachModel(const Qwen3VLModel& model);

  // Looks a key up in Redis once, so that the log says at start whether Redis answers
  // (and if not, why); never throws. AttachModel calls it. Whether Redis answered.
  bool ProbeRedis();

  // PREFIX KIND:MODEL:ID, the key of a value of `kind` ("ans") for this model.
  std::string Key(std::string_view kind, std::string_view id) const;
  const std::string& model_key() const { return model_key_; }
  const SharedCacheOptions& options() const { return options_; }
  RedisClient& client() { return *client_; }
  BackgroundWriter& writer() { return *writer_; }
  SharedCacheCounters& counters() { return counters_; }
  const SharedCacheCounters& counters() const { return counters_; }

 private:
  SharedCacheOptions options_;
  SharedCacheCounters counters_;
  std::shared_ptr<RedisClient> client_;
  std::unique_ptr<BackgroundWriter> writer_;
  std::string model_key_;
  std::string where_;  // host:port, for logs (the URL may hold a password)
};

}  // namespace qvl
