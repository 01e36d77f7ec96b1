#include "share/background_writer.h"

namespace qvl {

BackgroundWriter::BackgroundWriter(std::shared_ptr<RedisClient> client, size_t max_pending_bytes,
                                   std::chrono::milliseconds timeout)
    : client_(std::move(client)), max_pending_bytes_(max_pending_bytes), timeout_(timeout) {
  thread_ = std::thread([this] { Run(); });
}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    wake_.notify_one();
  }
  thread_.join();
  for (Job& job : jobs_) job.done(false);
}

void BackgroundWriter::Post(std::string key, size_t bytes, std::function<std::string()> make_value,
                            std::function<void(bool)> done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // One value over the budget still goes when nothing else waits.
    if (!stop_ && (jobs_.empty() || pending_bytes_ + bytes <= max_pending_bytes_)) {
      pending_bytes_ += bytes;
      jobs_.push_back({std::move(key), bytes, std::move(make_value), std::move(done)});
      wake_.notify_one();
      return;
    }
  }
  done(false);
}

void BackgroundWriter::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return (jobs_.empty() && !busy_) || stop_; });
}

void BackgroundWriter::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
    if (stop_) return;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    lock.unlock();
    const std::string value = job.make_value();
    const bool written = client_->Set(job.key, value, 0, timeout_);
    job.done(written);
    lock.lock();
    pending_bytes_ -= job.bytes;
    busy_ = false;
    if (jobs_.empty()) idle_.notify_all();
  }
}

}  // namespace qvl
