// Counters of the caches shared between replicas, for /metrics. Lock-free; shared by
// the Redis client (faults), the encoding store, the answer cache and the response store.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "share/redis_client.h"

namespace qvl {

struct SharedCacheCounters {
  RedisFaultCounters faults;
  std::atomic<int64_t> image_hits{0};      // encodings fetched and used
  std::atomic<int64_t> image_misses{0};    // asked, not there
  std::atomic<int64_t> image_stores{0};    // written
  std::atomic<int64_t> image_dropped{0};   // not written: the writer was behind or failed
  std::atomic<int64_t> image_rejected{0};  // fetched but refused (version, checksum, shape)
  std::atomic<int64_t> answer_hits{0};
  std::atomic<int64_t> answer_misses{0};
  std::atomic<int64_t> answer_stores{0};
  std::atomic<int64_t> answer_dropped{0};  // not written: the writer was behind or failed
  std::atomic<int64_t> answer_rejected{0};
  std::atomic<int64_t> response_hits{0};      // stored responses found in Redis
  std::atomic<int64_t> response_misses{0};    // looked up in Redis, not there
  std::atomic<int64_t> response_stores{0};    // written
  std::atomic<int64_t> response_dropped{0};   // not written: the writer was behind or failed
  std::atomic<int64_t> response_rejected{0};  // fetched but refused (key, version, checksum)
};

// Appends the counters in Prometheus' text format (qvl_shared_cache_*).
void RenderSharedCacheCounters(const SharedCacheCounters& c, std::string* out);

}  // namespace qvl
