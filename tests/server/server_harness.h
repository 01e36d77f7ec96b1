// An ApiServer on 127.0.0.1 (a free port) in this process, answering from the tiny
// fixture model, and a client for it.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/api_server.h"
#include "server/named_events_for_test.h"
#include "tiny_cases.h"

namespace qvl::testing {

struct HarnessOptions {
  ApiServerOptions server;
  EngineOptions engine;
  bool load_model = true;
  // The checkpoint's own bf16 with f32 matmuls by default (greedy tokens equal the
  // goldens); a packed format computes as `qvl serve --dtype` does.
  WeightFormat weights = WeightFormat::kBF16;
  std::string model_dir;  // empty: the tiny fixture model (ModelDir())
};

// Defaults for the tests: the fixture's model name, f32 matmuls (greedy tokens equal
// the goldens exactly), small limits.
HarnessOptions DefaultHarnessOptions();

class ServerHarness {
 public:
  explicit ServerHarness(const HarnessOptions& options = DefaultHarnessOptions());
  ~ServerHarness();

  int port() const { return server_->port(); }
  httplib::Client Client() const;
  ApiServer& server() { return *server_; }
  Engine* engine() { return engine_.get(); }

 private:
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<ApiServer> server_;
};

struct HttpResult {
  int status = 0;
  std::string body;
  nlohmann::json json;  // parsed body when it is JSON
  std::string content_type;
};

HttpResult PostJson(const ServerHarness& harness, const std::string& path, const std::string& body,
                    const httplib::Headers& headers = {});
HttpResult Get(const ServerHarness& harness, const std::string& path,
               const httplib::Headers& headers = {});

// The payloads of an SSE body's "data:" events (named or not); "[DONE]" as a JSON string.
std::vector<nlohmann::json> SseEvents(const std::string& body);
// The concatenated delta contents of a stream.
std::string StreamedText(const std::vector<nlohmann::json>& events);

// A test suite whose tests share one server (started before its first test), serving
// the model folder `Folder` makes.
template <std::string (*Folder)() = ModelDir>
class SuiteServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    HarnessOptions options = DefaultHarnessOptions();
    options.model_dir = Folder();
    harness_ = new ServerHarness(options);
  }
  static void TearDownTestSuite() {
    delete harness_;
    harness_ = nullptr;
  }
  static HttpResult Post(const std::string& path, const nlohmann::json& body) {
    return PostJson(*harness_, path, body.dump());
  }
  static HttpResult Chat(const nlohmann::json& body) { return Post("/v1/chat/completions", body); }

  static inline ServerHarness* harness_ = nullptr;
};
using SharedServerTest = SuiteServerTest<>;

// A metric's value from /metrics ("qvl_active_sequences"), -1 if absent.
double MetricValue(const std::string& metrics_text, const std::string& name);

// /metrics once it holds `text`, waiting up to 5 s (a response is counted once written,
// a moment after the client has it); the last /metrics read if it never does.
std::string MetricsHolding(const ServerHarness& harness, const std::string& text,
                           const httplib::Headers& headers = {});

}  // namespace qvl::testing
