// Hands engine updates of one request to the HTTP thread that answers it. The engine
// side never blocks (UpdateSink must return at once); the HTTP side waits with a
// timeout so it can notice a client that went away while nothing was produced.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <vector>

#include "engine/request.h"

namespace qvl {

class UpdateChannel {
 public:
  void Push(GenerationUpdate&& update);

  // Waits until updates are queued or `timeout` passes, then moves all queued updates
  // to `out` (appending). Returns false on timeout with nothing queued.
  bool Take(std::chrono::milliseconds timeout, std::vector<GenerationUpdate>* out);

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<GenerationUpdate> queue_;
};

}  // namespace qvl
