// Test support: the lines logged while a CapturedLog lives go to it instead of stderr.
// Header-only; for tests.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"

namespace qvl {

class CapturedLog {
 public:
  CapturedLog() {
    SetLogSink([this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(line);
    });
  }
  ~CapturedLog() { SetLogSink({}); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  // Read it while no other thread logs.
  const std::vector<std::string>& lines() const { return lines_; }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    lines_.clear();
  }
  // The lines holding every one of `parts`.
  size_t Count(const std::vector<std::string>& parts) const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const std::string& line : lines_) n += Holds(line, parts);
    return n;
  }
  // The first line holding every one of `parts`, waiting up to `timeout` for another
  // thread to log it (an access line is written after its response); "" if none.
  std::string WaitFor(const std::vector<std::string>& parts,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30)) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (const std::string& line : lines_) {
          if (Holds(line, parts)) return line;
        }
      }
      if (std::chrono::steady_clock::now() >= deadline) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  // Every line, each ended by a newline: for failure messages.
  std::string Joined() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::string all;
    for (const std::string& line : lines_) all += line + "\n";
    return all;
  }

 private:
  static bool Holds(const std::string& line, const std::vector<std::string>& parts) {
    for (const std::string& p : parts) {
      if (line.find(p) == std::string::npos) return false;
    }
    return true;
  }

  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

}  // namespace qvl
