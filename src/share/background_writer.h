// Writes to Redis off the caller's thread: Post queues a value (made lazily on the
// writer thread, so the caller pays no serialization) and returns at once; a queue over
// its byte budget drops new values rather than grow or block. Used from the engine
// thread, which must never wait on the network.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "share/redis_client.h"

namespace qvl {

class BackgroundWriter {
 public:
  // `max_pending_bytes` bounds what waits to be written (by the sizes Post is given).
  BackgroundWriter(std::shared_ptr<RedisClient> client, size_t max_pending_bytes,
                   std::chrono::milliseconds timeout);
  ~BackgroundWriter();  // drops what is still queued and joins
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Queues SET key make_value(); `done(written)` runs on the writer thread afterwards
  // (written == false: Redis failed), or at once with false when the queue is full.
  void Post(std::string key, size_t bytes, std::function<std::string()> make_value,
            std::function<void(bool written)> done);
  // Blocks until everything queued so far is written or dropped (tests, shutdown).
  void Flush();

 private:
  struct Job {
    std::string key;
    size_t bytes;
    std::function<std::string()> make_value;
    std::function<void(bool)> done;
  };
  void Run();

  std::shared_ptr<RedisClient> client_;
  size_t max_pending_bytes_;
  std::chrono::milliseconds timeout_;
  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::deque<Job> jobs_;
  size_t pending_bytes_ = 0;
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace qvl
