#include "server/server_metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace qvl {
namespace {

bool Contains(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(HistogramTest, RendersCumulativeBuckets) {
  Histogram h({0.025, 0.1, 1});
  h.Observe(0.05);
  h.Observe(0.5, 3);
  h.Observe(7);
  std::string out;
  h.Render("x_seconds", "Test.", &out);
  EXPECT_EQ(out,
            "# HELP x_seconds Test.\n# TYPE x_seconds histogram\n"
            "x_seconds_bucket{le=\"0.025\"} 0\n"
            "x_seconds_bucket{le=\"0.1\"} 1\n"
            "x_seconds_bucket{le=\"1\"} 4\n"
            "x_seconds_bucket{le=\"+Inf\"} 5\n"
            "x_seconds_sum 8.55\n"
            "x_seconds_count 5\n");
}

TEST(ServerMetricsTest, CountsResponsesAndEngineFigures) {
  ServerMetrics metrics;
  metrics.CountResponse("/v1/chat/completions", 200);
  metrics.CountResponse("/v1/chat/completions", 200);
  metrics.CountResponse("/v1/chat/completions", 400);
  metrics.CountResponse("/random/path/123", 404);
  GenerationUpdate done;
  done.finished = true;
  done.finish_reason = FinishReason::kStop;
  done.usage.completion_tokens = 5;
  done.timings.ttft_ms = 200;
  done.timings.decode_ms = 80;
  metrics.ObserveGeneration(done);
  EngineStats stats;
  stats.queued = 3;
  stats.active = 2;
  stats.kv_pages_total = 100;
  stats.kv_pages_used = 25;
  stats.requests_cancelled = 1;
  const std::string text = metrics.Render(&stats, true);
  EXPECT_TRUE(
      Contains(text, "qvl_http_responses_total{route=\"/v1/chat/completions\",code=\"200\"} 2\n"));
  EXPECT_TRUE(
      Contains(text, "qvl_http_responses_total{route=\"/v1/chat/completions\",code=\"400\"} 1\n"));
  EXPECT_TRUE(Contains(text, "qvl_http_responses_total{route=\"other\",code=\"404\"} 1\n"));
  EXPECT_TRUE(Contains(text, "qvl_time_to_first_token_seconds_bucket{le=\"0.25\"} 1\n"));
  EXPECT_TRUE(Contains(text, "qvl_time_per_output_token_seconds_count 4\n"));
  EXPECT_TRUE(Contains(text, "qvl_queue_depth 3\n"));
  EXPECT_TRUE(Contains(text, "qvl_active_sequences 2\n"));
  EXPECT_TRUE(Contains(text, "qvl_kv_cache_usage_ratio 0.25\n"));
  EXPECT_TRUE(Contains(text, "qvl_requests_total{outcome=\"cancelled\"} 1\n"));
  EXPECT_TRUE(Contains(text, "qvl_model_ready 1\n"));
  EXPECT_GT(ProcessRssBytes(), 0);
  EXPECT_FALSE(Contains(metrics.Render(nullptr, false), "qvl_queue_depth"));
}

}  // namespace
}  // namespace qvl
