// Many clients at once over 127.0.0.1 with the tiny fixture model: concurrent image
// streams, cancelled streams, a full queue and prefix reuse across turns.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

// A streamed request whose client reads the first bytes and then stalls until
// Release(); hanging up after that cancels it on the server.
class StalledStream {
 public:
  StalledStream(const ServerHarness& harness, const nlohmann::json& body)
      : client_("127.0.0.1", harness.port()) {
    thread_ = std::thread([this, text = body.dump()] {
      httplib::Request req;
      req.method = "POST";
      req.path = "/v1/chat/completions";
      req.body = text;
      req.set_header("Content-Type", "application/json");
      req.content_receiver = [this](const char*, size_t, uint64_t, uint64_t) {
        std::unique_lock<std::mutex> lock(mutex_);
        started_ = true;
        changed_.notify_all();
        changed_.wait(lock, [this] { return released_; });
        return false;
      };
      httplib::Response res;
      httplib::Error error;
      client_.send(req, res, error);
    });
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return started_; });
  }
  ~StalledStream() {
    Release();
    thread_.join();
  }
  void Release() {
    const std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  httplib::Client client_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool started_ = false;
  bool released_ = false;
};

nlohmann::json LongStream() {
  return {{"messages", {{{"role", "user"}, {"content", "count"}}}},
          {"max_tokens", 3000},
          {"ignore_eos", true},
          {"stream", true}};
}

// Waits (bounded) until the engine has nothing running or queued.
void WaitIdle(ServerHarness& harness) {
  for (int i = 0; i < 3000; ++i) {
    const EngineStats s = harness.engine()->Stats();
    if (s.active == 0 && s.queued == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

TEST(ServerLoadTest, EightConcurrentImageStreamsMatchTheirSoloAnswers) {
  ServerHarness harness;
  const std::vector<TinyCase> cases = LoadTinyCases();
  std::vector<std::string> texts(8);
  std::vector<int> statuses(8, 0);
  std::vector<std::thread> clients;
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back([&, i] {
      nlohmann::json body = cases[1 + i % (cases.size() - 1)].request;  // cases with images
      body["stream"] = true;
      const HttpResult r = PostJson(harness, "/v1/chat/completions", body.dump());
      statuses[i] = r.status;
      texts[i] = StreamedText(SseEvents(r.body));
    });
  }
  for (std::thread& t : clients) t.join();
  for (int i = 0; i < 8; ++i) {
    const TinyCase& c = cases[1 + i % (cases.size() - 1)];
    EXPECT_EQ(statuses[i], 200) << c.name;
    EXPECT_EQ(texts[i], c.greedy_text) << c.name;
  }
}

TEST(ServerLoadTest, CancelledStreamFreesItsSlot) {
  ServerHarness harness;
  {
    StalledStream stream(harness, LongStream());
    const HttpResult metrics = Get(harness, "/metrics");
    EXPECT_EQ(MetricValue(metrics.body, "qvl_active_sequences") +
                  MetricValue(metrics.body, "qvl_queue_depth"),
              1);
  }  // hangs up
  WaitIdle(harness);
  const HttpResult metrics = Get(harness, "/metrics");
  EXPECT_EQ(MetricValue(metrics.body, "qvl_active_sequences"), 0);
  EXPECT_EQ(MetricValue(metrics.body, "qvl_queue_depth"), 0);
  EXPECT_NE(metrics.body.find("qvl_requests_total{outcome=\"cancelled\"} 1\n"), std::string::npos)
      << metrics.body;
  // The freed slot serves the next request.
  const TinyCase c = LoadTinyCase("01_text_only");
  const HttpResult r = PostJson(harness, "/v1/chat/completions", c.request.dump());
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.json["choices"][0]["message"]["content"], c.greedy_text);
}

// A whole (not streamed) answer writes nothing until it is done, so only the server's
// check for a closed connection can stop it when its client hangs up.
TEST(ServerLoadTest, HangingUpOnAWholeAnswerCancelsIt) {
  ServerHarness harness;
  nlohmann::json body = LongStream();
  body["stream"] = false;
  body["max_tokens"] = 4000;  // seconds of decoding on the tiny model
  const std::string text = body.dump();
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(harness.port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const std::string request =
      StrCat("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n",
             "Content-Type: application/json\r\nContent-Length: ", text.size(), "\r\n\r\n", text);
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  for (int i = 0; i < 500 && harness.engine()->Stats().active == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(harness.engine()->Stats().active, 1);
  ::close(fd);
  WaitIdle(harness);
  // Run to its end, the answer would finish rather than be cancelled.
  const EngineStats stats = harness.engine()->Stats();
  EXPECT_EQ(stats.active, 0);
  EXPECT_EQ(stats.requests_cancelled, 1);
  // Counted as nginx logs it, not as the 200 it would have been.
  const std::string counted =
      "qvl_http_responses_total{route=\"/v1/chat/completions\",code=\"499\"} 1";
  EXPECT_NE(MetricsHolding(harness, counted).find(counted), std::string::npos);
}

TEST(ServerLoadTest, FullQueueIs503) {
  HarnessOptions options = DefaultHarnessOptions();
  options.engine.max_sequences = 1;
  options.engine.max_queue = 1;
  ServerHarness harness(options);
  {
    StalledStream running(harness, LongStream());
    StalledStream waiting(harness, LongStream());
    const HttpResult refused = PostJson(harness, "/v1/chat/completions", LongStream().dump());
    EXPECT_EQ(refused.status, 503) << refused.body;
    EXPECT_EQ(refused.json["error"]["type"], "server_error");
    EXPECT_EQ(refused.json["error"]["code"], "unavailable");
  }
  WaitIdle(harness);
  const EngineStats stats = harness.engine()->Stats();
  EXPECT_EQ(stats.active, 0);
  EXPECT_EQ(stats.queued, 0);
  EXPECT_GE(stats.requests_cancelled, 1);
  // Both places are free again.
  const HttpResult after =
      PostJson(harness, "/v1/chat/completions", LoadTinyCase("01_text_only").request.dump());
  EXPECT_EQ(after.status, 200) << after.body;
}

TEST(ServerLoadTest, FollowUpTurnReusesThePrefixAndAnswersAsCold) {
  ServerHarness harness;
  const TinyCase two_turns = LoadTinyCase("04_two_turns");
  nlohmann::json first_turn = two_turns.request;
  first_turn["messages"] = nlohmann::json::array({two_turns.request["messages"][0]});
  const HttpResult first = PostJson(harness, "/v1/chat/completions", first_turn.dump());
  ASSERT_EQ(first.status, 200) << first.body;
  const HttpResult follow_up = PostJson(harness, "/v1/chat/completions", two_turns.request.dump());
  ASSERT_EQ(follow_up.status, 200) << follow_up.body;
  EXPECT_GT(follow_up.json["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), 0);
  EXPECT_EQ(follow_up.json["choices"][0]["message"]["content"], two_turns.greedy_text);
  EXPECT_EQ(follow_up.json["usage"]["prompt_tokens"], two_turns.prompt_tokens);
}

}  // namespace
}  // namespace qvl::testing
