// `qvl bench --baseline FILE`: a run set beside an earlier run's report (`qvl bench --json`
// saved to FILE), stage by stage, so that an update that makes a request slower is caught
// (USERS.md #8: "an image prompt going from 1 s to 10 s" after an update). As
// llama.cpp's compare-llama-bench.py compares two commits' llama-bench results.
//
// A slowdown is the extra time the same work takes: for a time, now / baseline - 1; for a
// rate (decode tokens per second), baseline / now - 1; for peak memory, now / baseline - 1.
// The stages gated are the user-visible ones: vision encode (and the video's share),
// prefill, time to first token, decode and peak RSS. The probes of the machine (memory
// bandwidth, compute peak) and its CPU and kernel tier are set side by side as notes: on a
// shared host they explain a slowdown that is the machine's, not qvl's.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace qvl::cli {

// An earlier report read back. Throws Error(kNotFound / kCorrupt) naming the file and the
// field that is missing or mistyped.
struct BenchBaseline {
  std::string path;
  nlohmann::json report;
};
BenchBaseline ReadBenchBaseline(const std::string& path);

// Throws Error(kInvalidArgument) unless `now` measures the request the baseline measured:
// the same weights, threads, prompt and image tokens and generated tokens. `now` may hold
// only some of those fields (the flags, before any run): the others are not compared.
void CheckSameRequest(const BenchBaseline& baseline, const nlohmann::ordered_json& now);

struct StageChange {
  std::string key;    // the report's field: "vision_encode_ms"
  std::string label;  // "vision encode"
  std::string unit;   // "ms", "tok/s", "MiB"
  std::string worse;  // how its regression reads: "slower", "larger"
  double baseline = 0, now = 0;
  double slowdown_percent = 0;  // negative: faster or smaller
  bool regressed = false;       // slowdown_percent above the limit
};

struct BenchComparison {
  std::string baseline_path;
  double max_slowdown_percent = 0;
  std::vector<StageChange> stages;
  std::vector<std::string> notes;  // how the machine differed between the two runs
  bool Regressed() const;
};

BenchComparison CompareBench(const BenchBaseline& baseline, const nlohmann::ordered_json& now,
                             double max_slowdown_percent);

// The table printed after the report's own, and its JSON form (the report's "baseline").
std::string FormatComparison(const BenchComparison& comparison);
nlohmann::ordered_json ComparisonJson(const BenchComparison& comparison);
// The stages over the limit in one line: "vision encode 15.2 % slower, peak RSS 12.0 %
// larger".
std::string RegressionSummary(const BenchComparison& comparison);

}  // namespace qvl::cli
