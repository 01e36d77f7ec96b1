#include "server/update_channel.h"

namespace qvl {

void UpdateChannel::Push(GenerationUpdate&& update) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(update));
  }
  ready_.notify_one();
}

bool UpdateChannel::Take(std::chrono::milliseconds timeout, std::vector<GenerationUpdate>* out) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [this] { return !queue_.empty(); })) return false;
  while (!queue_.empty()) {
    out->push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return true;
}

}  // namespace qvl
