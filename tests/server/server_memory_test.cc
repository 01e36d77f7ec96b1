// A bounded load run over 127.0.0.1 with the tiny fixture model: no errors, and memory
// flat once warm. In a process of its own so that no other test's threads and buffers
// blur the resident-memory figures.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "server/server_metrics.h"
#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

// AddressSanitizer holds freed blocks in a quarantine of up to 256 MiB and recycles them
// in its own order, so resident memory under it measures the quarantine, not leaks; that
// build checks leaks with LeakSanitizer instead.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kRssIsMeaningful = false;
#else
constexpr bool kRssIsMeaningful = true;
#endif

TEST(ServerMemoryTest, BoundedLoadHasNoErrorsAndFlatMemory) {
  // A small KV pool and few HTTP threads, so that the pool's pages and every thread's
  // stack and scratch buffers are resident after the warm-up rounds and later growth
  // can only be a leak.
  HarnessOptions options = DefaultHarnessOptions();
  options.engine.kv_cache_bytes = size_t{8} << 20;
  options.server.http_threads = 6;
  options.engine.context_tokens = 1024;
  ServerHarness harness(options);
  const nlohmann::json image_request = [] {
    nlohmann::json body = LoadTinyCase("02_one_image_jpeg").request;
    body["max_tokens"] = 4;
    return body;
  }();
  auto run = [&](int clients, int requests_each) {
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        httplib::Client client("127.0.0.1", harness.port());
        client.set_read_timeout(120, 0);
        for (int i = 0; i < requests_each; ++i) {
          nlohmann::json body = image_request;
          body["stream"] = (i + c) % 2 == 0;
          const httplib::Result r =
              client.Post("/v1/chat/completions", body.dump(), "application/json");
          if (!r || r->status != 200) ++failures;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    return failures.load();
  };
  // Rounds of 40 requests: the first ones fill caches, pools and malloc arenas; after
  // that a leak would keep RSS growing round after round.
  std::vector<int64_t> rss;
  for (int round = 0; round < 10; ++round) {
    EXPECT_EQ(run(4, 10), 0) << "round " << round;
    rss.push_back(ProcessRssBytes());
  }
  std::string history;
  for (int64_t r : rss) history += std::to_string(r >> 20) + " MiB ";
  std::printf("RSS after each round of 40 requests: %s\n", history.c_str());
  // 240 requests after the warm-up: losing even a decoded image (300 KB) per request
  // would be 70 MiB; allocator noise stays well under 16 MiB.
  if (kRssIsMeaningful) {
    EXPECT_LT(rss.back() - rss[4], int64_t{16} << 20) << "RSS after each round: " << history;
  }
  // Responses are counted once written, a moment after the client has them.
  const std::string all_ok =
      "qvl_http_responses_total{route=\"/v1/chat/completions\",code=\"200\"} 400\n";
  const std::string metrics = MetricsHolding(harness, all_ok);
  EXPECT_NE(metrics.find(all_ok), std::string::npos) << metrics;
}

}  // namespace
}  // namespace qvl::testing
