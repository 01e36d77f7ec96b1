// Speculative decoding over HTTP: a server that drafts streams the same answer, chunk for
// chunk, as one that does not, and reports what it drafted in timings and /metrics.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ops/linear.h"
#include "server_harness.h"

namespace qvl::testing {
namespace {

HarnessOptions Q8Server(int draft_tokens) {
  HarnessOptions o = DefaultHarnessOptions();
  o.weights = WeightFormat::kQ8;
  o.engine.draft_tokens = draft_tokens;
  return o;
}

// The tiny model repeats itself within a few dozen tokens, so its answers get drafts.
std::string Request(bool stream) {
  return nlohmann::json{{"model", "tiny-qwen3vl"},
                        {"messages", {{{"role", "user"}, {"content", "Say it again and again."}}}},
                        {"max_tokens", 64},
                        {"temperature", 0},
                        {"ignore_eos", true},
                        {"stream", stream},
                        {"stream_options", {{"include_usage", true}}}}
      .dump();
}

TEST(ServerSpeculation, DraftsChangeNothingTheClientSeesButTheTimings) {
  if (RowsPerWeightRead(WeightFormat::kQ8) < 2) {
    GTEST_SKIP() << "needs AVX2: the scalar q8 kernels read the weights once per row, so "
                    "the engine drafts nothing";
  }
  const ServerHarness plain(Q8Server(0));
  const ServerHarness drafting(Q8Server(3));

  const HttpResult a = PostJson(plain, "/v1/chat/completions", Request(false));
  const HttpResult b = PostJson(drafting, "/v1/chat/completions", Request(false));
  ASSERT_EQ(a.status, 200) << a.body;
  ASSERT_EQ(b.status, 200) << b.body;
  EXPECT_EQ(b.json["choices"][0]["message"], a.json["choices"][0]["message"]);
  EXPECT_EQ(b.json["usage"]["completion_tokens"], 64);
  EXPECT_FALSE(a.json["timings"].contains("draft_n"));
  const int64_t drafted = b.json["timings"]["draft_n"].get<int64_t>();
  const int64_t kept = b.json["timings"]["draft_n_accepted"].get<int64_t>();
  EXPECT_GT(kept, 0);
  EXPECT_GE(drafted, kept);

  // Streams: one content delta per token either way, the same text.
  const HttpResult sa = PostJson(plain, "/v1/chat/completions", Request(true));
  const HttpResult sb = PostJson(drafting, "/v1/chat/completions", Request(true));
  const std::vector<nlohmann::json> ea = SseEvents(sa.body), eb = SseEvents(sb.body);
  EXPECT_EQ(StreamedText(eb), StreamedText(ea));
  EXPECT_EQ(StreamedText(eb), b.json["choices"][0]["message"]["content"].get<std::string>());
  EXPECT_EQ(eb.size(), ea.size());

  const HttpResult metrics = Get(drafting, "/metrics");
  EXPECT_EQ(MetricValue(metrics.body, "qvl_draft_tokens_total"), 2.0 * drafted);
  EXPECT_EQ(MetricValue(metrics.body, "qvl_draft_tokens_accepted_total"), 2.0 * kept);
  EXPECT_EQ(MetricValue(Get(plain, "/metrics").body, "qvl_draft_tokens_total"), 0);
}

}  // namespace
}  // namespace qvl::testing
