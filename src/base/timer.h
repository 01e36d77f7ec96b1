// Wall-clock timing for the figures qvl reports (encode ms, tokens/s, TTFT).
#pragma once

#include <chrono>

namespace qvl {

inline double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class Stopwatch {
 public:
  Stopwatch() : start_(NowSeconds()) {}
  void Reset() { start_ = NowSeconds(); }
  double Seconds() const { return NowSeconds() - start_; }
  double Millis() const { return Seconds() * 1e3; }

 private:
  double start_;
};

}  // namespace qvl
