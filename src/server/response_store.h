// The responses kept for OpenAI's stored responses (`store: true`): a later request
// continues one with `previous_response_id`, GET /v1/responses/{id} returns it, DELETE
// removes it. Each replica keeps the recently used ones in memory (least recently used
// out first, bounded by bytes). With --redis, Redis holds the truth for every replica:
// a response is written there before its client has the last of it, every lookup asks
// Redis first (so a DELETE on one replica is seen by all), and only while Redis cannot
// be reached does a replica answer from its own memory.
//
// Thread-safe: HTTP worker threads call it concurrently. One mutex guards the in-memory
// entries; Redis is never read or written under it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "share/shared_cache.h"

namespace qvl {

// What one stored response holds: the Response object as sent to the client (JSON text)
// and the conversation it ended (JSON text of an array of Responses input items: the
// earlier conversation, this request's input, then its output items).
struct StoredResponse {
  std::string response;
  std::string conversation;
};

struct ResponseStoreOptions {
  // This replica's memory for stored responses; 0 = keep none.
  size_t max_bytes = size_t{256} << 20;
  int64_t shared_ttl_seconds = 24 * 3600;  // how long Redis keeps one (when shared)
};

// What one entry costs in memory beyond its strings (list node, index node, id twice).
inline constexpr size_t kStoredResponseOverheadBytes = 256;

// The bytes `value` under `id` counts against ResponseStoreOptions::max_bytes.
size_t StoredResponseBytes(const std::string& id, const StoredResponse& value);

class ResponseStore {
 public:
  // `shared` (may be null, not owned, outlives the store): also keep responses in Redis
  // so that every replica finds them. Its key (SharedCache::Key) is taken at each call,
  // so the store may be made before SharedCache::AttachModel.
  ResponseStore(ResponseStoreOptions options, SharedCache* shared);
  ~ResponseStore();
  ResponseStore(const ResponseStore&) = delete;
  ResponseStore& operator=(const ResponseStore&) = delete;

  // Keeps `value` under `id` ("resp_..."): in memory (evicting the least recently used
  // beyond max_bytes; a value larger than max_bytes is not kept locally), and, when
  // shared, in Redis with the TTL, within the cache's write timeout (a fault is counted
  // as response_dropped; the memory copy stays).
  void Put(const std::string& id, StoredResponse value);
  // The stored response, nullopt when there is none. Shared: Redis's answer within the
  // client's timeout (a hit is kept in memory, a miss drops the memory copy); on a fault
  // or a value that does not open (wrong key, version, checksum), counted, the memory
  // copy. Never throws.
  std::optional<StoredResponse> Get(const std::string& id);
  // Removes it from memory and (shared) from Redis, within the client's timeout. True if
  // it was found in either.
  bool Delete(const std::string& id);
  bool enabled() const { return options_.max_bytes > 0 || shared_ != nullptr; }

  // Bytes (StoredResponseBytes) and entries held in memory now.
  size_t local_bytes() const;
  size_t local_entries() const;

 private:
  struct State;
  const ResponseStoreOptions options_;
  SharedCache* const shared_;
  std::unique_ptr<State> state_;
};

// The Redis value of `value` under `key` (sealed: magic "QVLR"), and its inverse
// (nullopt when `sealed` is not a response value of this key and format version).
std::string SealStoredResponse(const std::string& key, const StoredResponse& value);
std::optional<StoredResponse> OpenStoredResponse(const std::string& key, std::string_view sealed);

}  // namespace qvl
