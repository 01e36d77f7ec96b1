#include "server/server_metrics.h"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <optional>

#include "server/routes.h"

namespace qvl {
namespace {

// The shortest text that reads back as `value`: le="0.025", not 0.025000000000000001.
std::string Number(double value) {
  char text[64];
  const std::to_chars_result end = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, end.ptr);
}

void Metric(std::string* out, std::string_view name, std::string_view type, std::string_view help,
            double value) {
  *out += StrCat("# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n", name, " ",
                 Number(value), "\n");
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value, int64_t count) {
  if (count <= 0) return;
  size_t bucket = 0;
  while (bucket < bounds_.size() && value > bounds_[bucket]) ++bucket;
  const std::lock_guard<std::mutex> lock(mutex_);
  counts_[bucket] += count;
  sum_ += value * static_cast<double>(count);
  count_ += count;
}

void Histogram::Render(std::string_view name, std::string_view help, std::string* out) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  *out += StrCat("# HELP ", name, " ", help, "\n# TYPE ", name, " histogram\n");
  int64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    *out += StrCat(name, "_bucket{le=\"", Number(bounds_[i]), "\"} ", cumulative, "\n");
  }
  *out += StrCat(name, "_bucket{le=\"+Inf\"} ", count_, "\n", name, "_sum ", Number(sum_), "\n",
                 name, "_count ", count_, "\n");
}

int64_t ProcessRssBytes() {
  FILE* file = std::fopen("/proc/self/statm", "r");
  if (file == nullptr) return 0;
  long long pages_total = 0;
  long long pages_resident = 0;
  const int read = std::fscanf(file, "%lld %lld", &pages_total, &pages_resident);
  std::fclose(file);
  if (read != 2) return 0;
  return pages_resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

ServerMetrics::ServerMetrics()
    : ttft_seconds_({0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80}),
      time_per_output_token_seconds_(
          {0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3, 0.5, 1}),
      image_encode_seconds_({0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64}),
      request_seconds_({0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160}) {}

void ServerMetrics::CountResponse(std::string_view path, int status) {
  const std::optional<KnownRoute> route = FindRoute(path);
  const std::string label(route ? route->label : "other");
  const std::lock_guard<std::mutex> lock(mutex_);
  ++responses_[{label, status}];
}

void ServerMetrics::ObserveGeneration(const GenerationUpdate& u) {
  if (u.finish_reason == FinishReason::kError) return;
  const Timings& t = u.timings;
  if (u.usage.completion_tokens > 0) ttft_seconds_.Observe(t.ttft_ms / 1e3);
  if (u.usage.completion_tokens > 1) {
    time_per_output_token_seconds_.Observe(
        t.decode_ms / 1e3 / static_cast<double>(u.usage.completion_tokens - 1),
        u.usage.completion_tokens - 1);
  }
  if (!t.images.empty() && t.vision_ms > 0) image_encode_seconds_.Observe(t.vision_ms / 1e3);
  request_seconds_.Observe(t.total_ms / 1e3);
}

std::string ServerMetrics::Render(const EngineStats* stats, bool ready) const {
  std::string out;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    out +=
        "# HELP qvl_http_responses_total HTTP responses by route and status code.\n"
        "# TYPE qvl_http_responses_total counter\n";
    for (const auto& [key, count] : responses_) {
      out += StrCat("qvl_http_responses_total{route=\"", key.first, "\",code=\"", key.second,
                    "\"} ", count, "\n");
    }
  }
  Metric(&out, "qvl_model_ready", "gauge", "1 once the model is loaded and requests are served.",
         ready ? 1 : 0);
  Metric(&out, "process_resident_memory_bytes", "gauge", "Resident memory of the qvl process.",
         static_cast<double>(ProcessRssBytes()));
  ttft_seconds_.Render("qvl_time_to_first_token_seconds",
                       "Time from submission to the first generated token.", &out);
  time_per_output_token_seconds_.Render("qvl_time_per_output_token_seconds",
                                        "Time per generated token after the first.", &out);
  image_encode_seconds_.Render("qvl_image_encode_seconds",
                               "Vision tower time per request with images.", &out);
  request_seconds_.Render("qvl_request_duration_seconds", "Time from submission to the last token.",
                          &out);
  if (stats == nullptr) return out;
  const EngineStats& s = *stats;
  Metric(&out, "qvl_queue_depth", "gauge", "Requests waiting to start.", s.queued);
  Metric(&out, "qvl_active_sequences", "gauge", "Requests being prefilled or decoded.", s.active);
  out +=
      "# HELP qvl_requests_total Finished generations by outcome.\n"
      "# TYPE qvl_requests_total counter\n";
  out += StrCat("qvl_requests_total{outcome=\"finished\"} ", s.requests_finished, "\n",
                "qvl_requests_total{outcome=\"cancelled\"} ", s.requests_cancelled, "\n",
                "qvl_requests_total{outcome=\"failed\"} ", s.requests_failed, "\n");
  Metric(&out, "qvl_prompt_tokens_total", "counter", "Prompt tokens of all requests.",
         s.prompt_tokens);
  Metric(&out, "qvl_prompt_tokens_cached_total", "counter",
         "Prompt tokens whose KV came from the prefix cache.", s.cached_prompt_tokens);
  Metric(&out, "qvl_completion_tokens_total", "counter", "Generated tokens.", s.completion_tokens);
  Metric(&out, "qvl_draft_tokens_total", "counter",
         "Tokens drafted for speculative decoding (prompt lookup, grammar).", s.draft_tokens);
  Metric(&out, "qvl_draft_tokens_accepted_total", "counter",
         "Drafted tokens kept: the sampler chose them too.", s.draft_tokens_accepted);
  Metric(&out, "qvl_images_encoded_total", "counter", "Images run through the vision tower.",
         s.images_encoded);
  Metric(&out, "qvl_image_cache_hits_total", "counter", "Images whose vision encoding was reused.",
         s.image_cache_hits);
  Metric(&out, "qvl_vision_seconds_total", "counter", "Time spent in the vision tower.",
         s.vision_seconds);
  Metric(&out, "qvl_kv_cache_pages", "gauge", "Pages in the KV cache pool.", s.kv_pages_total);
  Metric(&out, "qvl_kv_cache_pages_used", "gauge", "KV cache pages in use.", s.kv_pages_used);
  Metric(&out, "qvl_kv_cache_usage_ratio", "gauge", "Fraction of the KV cache pool in use.",
         s.kv_pages_total > 0 ? static_cast<double>(s.kv_pages_used) / s.kv_pages_total : 0.0);
  Metric(&out, "qvl_prefix_cache_pages", "gauge", "KV pages kept for prefix reuse.",
         s.prefix_cache_pages);
  return out;
}

}  // namespace qvl
