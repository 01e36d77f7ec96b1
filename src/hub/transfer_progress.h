// Progress of a multi-file download: a redrawn bar (size, speed, ETA, files) when stderr
// is a terminal, plain log lines every few seconds otherwise. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace qvl::hub {

enum class ProgressStyle { kBar, kLog, kQuiet };

// kBar when stderr is a terminal, else kLog.
ProgressStyle DefaultProgressStyle();

// "1.58 GB", "812 kB", "17 B" (decimal units, like the hub's web pages).
std::string FormatBytes(double bytes);

// "0:15", "1:02:03"; "--:--" when unknown.
std::string FormatDuration(double seconds);

class TransferProgress {
 public:
  // `resumed_bytes` of `total_bytes` were already on disk from an earlier run.
  TransferProgress(ProgressStyle style, std::string title, uint64_t total_bytes,
                   uint64_t resumed_bytes, int total_files);
  ~TransferProgress();
  TransferProgress(const TransferProgress&) = delete;
  TransferProgress& operator=(const TransferProgress&) = delete;

  // Bytes received; negative when a transfer restarts and drops what it had counted.
  void Add(int64_t bytes);
  void FileDone(const std::string& name, uint64_t size);
  // A message that must not be garbled by the bar (retries, warnings).
  void Note(const std::string& message);
  // Every file arrived: draws the full bar (nothing in log style: the caller says
  // "downloaded" once the whole pull is complete). Later calls do nothing.
  void Finish();
  // The transfers stopped early (an error, Ctrl-C): one line saying how much was fetched,
  // worded so that it cannot be taken for success. The destructor calls it when Finish
  // was not called.
  void Stop();

  uint64_t received() const { return received_.load(); }

 private:
  using Clock = std::chrono::steady_clock;
  void Run();
  std::string Line(bool final);
  void Draw(bool final);
  // Stops the ticker; false when it was stopped already.
  bool EndTicker();

  const ProgressStyle style_;
  const std::string title_;
  const uint64_t total_bytes_;
  const uint64_t resumed_bytes_;
  const int total_files_;
  const Clock::time_point start_ = Clock::now();
  std::atomic<int64_t> received_{0};
  std::atomic<int> files_done_{0};
  std::deque<std::pair<Clock::time_point, int64_t>> samples_;  // for the recent speed
  std::mutex mu_;
  std::condition_variable wake_;
  bool finished_ = false;
  std::thread ticker_;
};

}  // namespace qvl::hub
