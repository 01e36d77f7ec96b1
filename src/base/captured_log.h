// Test support: the lines logged while a CapturedLog lives go to it instead of stderr.
// Header-only; for tests.
#pragma once

#include <mutex>
#include <string>
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
    for (const std::string& line : lines_) {
      bool all = true;
      for (const std::string& p : parts) all = all && line.find(p) != std::string::npos;
      n += all;
    }
    return n;
  }
  // Every line, each ended by a newline: for failure messages.
  std::string Joined() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::string all;
    for (const std::string& line : lines_) all += line + "\n";
    return all;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

}  // namespace qvl
