// Vision encodings shared with other replicas of the same model (a Redis implementation
// is share/redis_encoding_store.h), so that a replica answers about an image another one
// has encoded without running the vision tower. The engine never waits on it: lookups
// run on the submitting thread before a request is queued, and new encodings are handed
// over without blocking.
#pragma once

#include <memory>

#include "engine/image_cache.h"

namespace qvl {

class SharedEncodingStore {
 public:
  virtual ~SharedEncodingStore() = default;
  // On a submitting thread: the encoding of `key`, or null on a miss or any fault, within
  // the store's short timeout. What it returns has the model's shapes for the key's grid.
  virtual std::shared_ptr<const VisionOutput> Find(const ImageKey& key) = 0;
  // On the engine thread: returns at once. The store writes in the background and may
  // drop the value when it is behind.
  virtual void Offer(const ImageKey& key, std::shared_ptr<const VisionOutput> value) = 0;
};

}  // namespace qvl
