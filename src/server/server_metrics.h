// What /metrics reports, in Prometheus' text format: HTTP responses by route and status,
// per-request latencies as histograms, and the engine's counters and gauges.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/engine.h"

namespace qvl {

// A cumulative Prometheus histogram with fixed upper bounds. Thread-safe.
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  // Records `count` observations of `value`.
  void Observe(double value, int64_t count = 1);
  // Appends "# HELP", "# TYPE", the _bucket lines (le="+Inf" last), _sum and _count.
  void Render(std::string_view name, std::string_view help, std::string* out) const;

 private:
  mutable std::mutex mutex_;
  std::vector<double> bounds_;
  std::vector<int64_t> counts_;  // per bucket, not cumulative; last = over every bound
  double sum_ = 0;
  int64_t count_ = 0;
};

// Resident set size of this process in bytes (from /proc/self/statm); 0 if unknown.
int64_t ProcessRssBytes();

class ServerMetrics {
 public:
  ServerMetrics();

  // One HTTP response, counted under its route's label (see FindRoute); paths that are
  // no route go under route="other" so that clients cannot grow the label set.
  void CountResponse(std::string_view path, int status);
  // Latencies of a finished generation (its last update).
  void ObserveGeneration(const GenerationUpdate& final_update);

  // The whole exposition. `stats` is null while the model is loading.
  std::string Render(const EngineStats* stats, bool ready) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, int64_t> responses_;
  Histogram ttft_seconds_;
  Histogram time_per_output_token_seconds_;
  Histogram image_encode_seconds_;
  Histogram request_seconds_;
};

}  // namespace qvl
