#include "cli/bench_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/error.h"
#include "base/json_fields.h"
#include "base/mapped_file.h"

namespace qvl::cli {
namespace {

// A report is a few kilobytes; anything this large is not one.
constexpr uint64_t kMaxReportBytes = 1 << 20;

enum class Better { kLower, kHigher };

struct Stage {
  const char* key;
  const char* label;
  const char* unit;
  Better better;
  const char* worse;  // how a regression reads: "slower", "larger"
  bool always;        // false: compared when both reports have it and the baseline's is not 0
};

// The stages a user waits for, in the order the report prints them.
constexpr Stage kStages[] = {
    {"vision_encode_ms", "vision encode", "ms", Better::kLower, "slower", false},
    {"video_encode_ms", "video encode", "ms", Better::kLower, "slower", false},
    {"prefill_ms", "prefill", "ms", Better::kLower, "slower", true},
    {"time_to_first_token_ms", "time to first token", "ms", Better::kLower, "slower", true},
    {"decode_tok_s", "decode", "tok/s", Better::kHigher, "slower", false},
    {"peak_rss_mib", "peak RSS", "MiB", Better::kLower, "larger", true},
};

// The fields that define the request: a report that differs in one measured other work.
constexpr const char* kStringRequestFields[] = {"dtype", "vision_dtype"};
constexpr const char* kIntRequestFields[] = {"threads", "generated_tokens", "prompt_tokens",
                                             "image_tokens", "video_tokens"};

std::string ValueText(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// A field of `now` against the baseline's; video_tokens is absent from reports without a
// video, so it counts as 0 there.
void CheckField(const BenchBaseline& baseline, const nlohmann::ordered_json& now, const char* key) {
  const auto it = now.find(key);
  if (it == now.end()) return;
  const auto base = baseline.report.find(key);
  const nlohmann::json base_value = base != baseline.report.end() ? *base : nlohmann::json(0);
  if (base_value != *it) {
    Fail(ErrorCode::kInvalidArgument, "--baseline ", baseline.path, " measured ", key, " ",
         ValueText(base_value), ", this run ", ValueText(*it),
         ": run qvl bench with the flags and files the baseline was measured with");
  }
}

double Slowdown(Better better, double base, double now) {
  if (better == Better::kHigher) return now > 0 ? 100.0 * (base / now - 1.0) : INFINITY;
  return base > 0 ? 100.0 * (now / base - 1.0) : 0.0;
}

// The baseline is read as nlohmann::json, this run's report built as ordered_json.
template <class Json>
double NumberOr(const Json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->template get<double>() : fallback;
}

// "memory read bandwidth 39.1 GB/s, baseline 58.9 (-34 %)" when a probe of the machine
// moved by more than the limit: the stage that follows it moved with it.
void NoteProbe(const char* what, const char* unit, const char* follows, double base, double now,
               double limit, std::vector<std::string>* notes) {
  if (!(base > 0) || !(now > 0)) return;
  const double change = 100.0 * (now / base - 1.0);
  if (std::fabs(change) <= limit) return;
  char line[256];
  std::snprintf(line, sizeof(line), "%s %.2f %s, baseline %.2f (%+.0f %%): %s", what, now, unit,
                base, change, follows);
  notes->push_back(line);
}

}  // namespace

bool BenchComparison::Regressed() const {
  return std::ranges::any_of(stages, [](const StageChange& s) { return s.regressed; });
}

BenchBaseline ReadBenchBaseline(const std::string& path) {
  BenchBaseline b{path, ParseJsonText(ReadFileToString(path, kMaxReportBytes), path)};
  const JsonFieldReader fields(b.report, path, "");
  for (const char* key : kStringRequestFields) fields.String(key);
  for (const char* key : kIntRequestFields) {
    if (std::string_view(key) != "video_tokens") fields.Int(key, 0, INT64_MAX);
  }
  fields.OptionalInt("video_tokens", 0, INT64_MAX);
  for (const Stage& s : kStages) {
    if (s.always) {
      fields.Number(s.key);
    } else {
      fields.OptionalNumber(s.key);
    }
  }
  return b;
}

void CheckSameRequest(const BenchBaseline& baseline, const nlohmann::ordered_json& now) {
  for (const char* key : kStringRequestFields) CheckField(baseline, now, key);
  for (const char* key : kIntRequestFields) CheckField(baseline, now, key);
}

BenchComparison CompareBench(const BenchBaseline& baseline, const nlohmann::ordered_json& now,
                             double max_slowdown_percent) {
  BenchComparison c;
  c.baseline_path = baseline.path;
  c.max_slowdown_percent = max_slowdown_percent;
  const nlohmann::json& base = baseline.report;
  for (const Stage& s : kStages) {
    const double b = NumberOr(base, s.key, 0), n = NumberOr(now, s.key, 0);
    if (!s.always && !(b > 0 && now.contains(s.key))) continue;
    StageChange change{s.key, s.label, s.unit, s.worse, b, n, Slowdown(s.better, b, n)};
    change.regressed = change.slowdown_percent > max_slowdown_percent;
    c.stages.push_back(std::move(change));
  }
  const double limit = max_slowdown_percent;
  const auto text = [](const auto& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->template get<std::string>() : std::string();
  };
  if (text(base, "cpu") != text(now, "cpu")) {
    c.notes.push_back("another CPU: baseline \"" + text(base, "cpu") + "\"");
  }
  if (text(base, "kernel_tier") != text(now, "kernel_tier")) {
    c.notes.push_back("other kernels: baseline tier " + text(base, "kernel_tier") + ", now " +
                      text(now, "kernel_tier"));
  }
  NoteProbe("memory read bandwidth", "GB/s", "decode follows it",
            NumberOr(base, "memory_bandwidth_gb_s", 0), NumberOr(now, "memory_bandwidth_gb_s", 0),
            limit, &c.notes);
  const auto peak = [](const auto& j) {
    const auto it = j.find("compute_peak");
    return it != j.end() && it->is_object() ? NumberOr(*it, "int8_tops", 0) : 0.0;
  };
  NoteProbe("compute peak", "int8 TOP/s", "vision encode and prefill follow it", peak(base),
            peak(now), limit, &c.notes);
  return c;
}

std::string FormatComparison(const BenchComparison& c) {
  char line[256];
  std::snprintf(line, sizeof(line),
                "against the baseline %s (a stage more than %g %% worse fails):\n",
                c.baseline_path.c_str(), c.max_slowdown_percent);
  std::string out = line;
  for (const StageChange& s : c.stages) {
    std::snprintf(line, sizeof(line), "  %-28s %10.1f %-5s -> %10.1f %-5s %+7.1f %% %s\n",
                  s.label.c_str(), s.baseline, s.unit.c_str(), s.now, s.unit.c_str(),
                  s.slowdown_percent, s.regressed ? s.worse.c_str() : "");
    out += line;
  }
  for (const std::string& note : c.notes) out += "  note: " + note + "\n";
  return out;
}

nlohmann::ordered_json ComparisonJson(const BenchComparison& c) {
  nlohmann::ordered_json j;
  j["file"] = c.baseline_path;
  j["max_slowdown_percent"] = c.max_slowdown_percent;
  j["regressed"] = c.Regressed();
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const StageChange& s : c.stages) {
    stages.push_back({{"field", s.key},
                      {"baseline", s.baseline},
                      {"now", s.now},
                      {"slowdown_percent", s.slowdown_percent},
                      {"regressed", s.regressed}});
  }
  j["stages"] = std::move(stages);
  j["notes"] = c.notes;
  return j;
}

std::string RegressionSummary(const BenchComparison& c) {
  std::string out;
  char part[128];
  for (const StageChange& s : c.stages) {
    if (!s.regressed) continue;
    std::snprintf(part, sizeof(part), "%s%s %.1f %% %s", out.empty() ? "" : ", ", s.label.c_str(),
                  s.slowdown_percent, s.worse.c_str());
    out += part;
  }
  return out;
}

}  // namespace qvl::cli
