// The engine's own log lines about a request name it by the X-Request-Id its response
// and access line carry, so that an operator can join them: a video's warnings (prepared
// for /tokenize and for a chat completion) and a preemption when the KV cache is full.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "base/captured_log.h"
#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

// Clip 07 as an MP4 cut after its first three frames' samples: its container declares
// 2.0 s, it holds 0.8 s.
std::string CutClipDataUrl() {
  const std::string clip =
      ReadFile(std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/07_video_frames/frames/clip.mp4");
  return "data:video/mp4;base64," + Base64(clip.substr(0, 70439));
}

TEST(ServerEngineLogTest, AVideosWarningNamesItsRequest) {
  ServerHarness harness;
  CapturedLog log;
  const nlohmann::json messages = {
      {{"role", "user"},
       {"content",
        {{{"type", "video_url"}, {"video_url", {{"url", CutClipDataUrl()}}}},
         {{"type", "text"}, {"text", "What happens?"}}}}}};
  // /tokenize first: it prepares the clip but encodes nothing, so the chat completion
  // after it prepares the clip again rather than reusing its encoding.
  const HttpResult counted =
      PostJson(harness, "/tokenize", nlohmann::json{{"messages", messages}}.dump(),
               {{"X-Request-Id", "clip-counted"}});
  ASSERT_EQ(counted.status, 200) << counted.body;
  const HttpResult answered =
      PostJson(harness, "/v1/chat/completions",
               nlohmann::json{{"messages", messages}, {"max_tokens", 1}}.dump(),
               {{"X-Request-Id", "clip-answered"}});
  ASSERT_EQ(answered.status, 200) << answered.body;
  for (const std::string id : {"clip-counted", "clip-answered"}) {
    EXPECT_EQ(log.Count({"video 1 (messages[0].content[0]) is cut short: its container "
                         "declares 2.0 s but holds 3 frames at 4 fps (0.8 s); the answer is about "
                         "those request_id=" +
                         id}),
              1u)
        << log.Joined();
  }
}

// A KV cache of 24 pages of 16 tokens: two answers of 250 tokens cannot both be in it, so
// the younger is preempted, and named.
TEST(ServerEngineLogTest, APreemptedRequestIsNamedByItsRequestId) {
  HarnessOptions options = DefaultHarnessOptions();
  options.engine.kv_page_tokens = 16;
  options.engine.kv_cache_bytes = 24 * 32 * 1024;  // the tiny model's page is 32 KiB
  ServerHarness harness(options);
  CapturedLog log;
  const std::string body = nlohmann::json{
      {"messages", {{{"role", "user"}, {"content", "hi"}}}},
      {"max_tokens", 250},
      {"ignore_eos", true}}.dump();
  std::vector<int> statuses(3);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < statuses.size(); ++i) {
    clients.emplace_back([&, i] {
      statuses[i] = PostJson(harness, "/v1/chat/completions", body,
                             {{"X-Request-Id", "long-" + std::to_string(i)}})
                        .status;
    });
  }
  for (std::thread& client : clients) client.join();
  for (const int status : statuses) EXPECT_EQ(status, 200);
  EXPECT_GE(log.Count({"KV cache full: preempting a request request_id=long-"}), 1u)
      << log.Joined();
  EXPECT_EQ(log.Count({"KV cache full: preempting a request request="}), 0u) << log.Joined();
}

}  // namespace
}  // namespace qvl::testing
