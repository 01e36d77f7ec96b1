// How many images or videos decode at once. Requests are prepared on the HTTP threads
// (dozens), and one 8192 x 8192 image takes about 270 MB while it decodes: without a
// bound, a few concurrent requests of small, highly compressed files could take the
// host's memory. Decoding is bound by the cores anyway, so more at once would not finish
// sooner.
#pragma once

#include <condition_variable>
#include <mutex>

namespace qvl {

class DecodeSlots {
 public:
  explicit DecodeSlots(int slots) : free_(slots > 0 ? slots : 1) {}

  // Holds one slot from construction (waiting for one) to destruction.
  class Held {
   public:
    explicit Held(DecodeSlots& slots) : slots_(slots) {
      std::unique_lock<std::mutex> lock(slots_.mutex_);
      slots_.freed_.wait(lock, [&] { return slots_.free_ > 0; });
      --slots_.free_;
    }
    ~Held() {
      {
        const std::lock_guard<std::mutex> lock(slots_.mutex_);
        ++slots_.free_;
      }
      slots_.freed_.notify_one();
    }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

   private:
    DecodeSlots& slots_;
  };

  int free() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return free_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  int free_;
};

}  // namespace qvl
