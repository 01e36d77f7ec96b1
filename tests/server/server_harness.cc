#include "server_harness.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "model/qwen3vl.h"
#include "server/malloc_tuning.h"
#include "tiny_cases.h"

namespace qvl::testing {

HarnessOptions DefaultHarnessOptions() {
  HarnessOptions o;
  o.server.port = 0;
  o.server.model_names = {"tiny-qwen3vl", "qwen3-vl"};
  o.server.http_threads = 48;
  o.server.max_body_bytes = size_t{8} << 20;
  o.server.request.max_images = 4;
  o.server.request.media.max_image_bytes = int64_t{1} << 20;
  o.engine.threads = 2;
  o.engine.max_sequences = 8;
  o.engine.max_queue = 16;
  o.engine.context_tokens = 4096;
  o.engine.max_images_per_request = 4;
  o.engine.max_image_bytes = size_t{1} << 20;
  o.engine.high_detail_image_tokens = 2048;
  o.engine.kv_cache_bytes = size_t{64} << 20;
  return o;
}

ServerHarness::ServerHarness(const HarnessOptions& options) {
  TuneMallocForServing();  // as `qvl serve` does
  if (options.load_model) {
    ModelOptions model_options;
    model_options.text_weights = model_options.vision_weights = options.weights;
    model_options.weight_cache_dir = "none";
    if (options.weights == WeightFormat::kBF16) {
      model_options.precision = MatmulPrecision::kF32;
      model_options.kv_dtype = DType::kF32;
    }
    engine_ = std::make_unique<Engine>(
        Qwen3VLModel::Load(options.model_dir.empty() ? ModelDir() : options.model_dir,
                           model_options),
        options.engine);
  }
  server_ = std::make_unique<ApiServer>(options.server);
  server_->Start();
  if (engine_) server_->SetEngine(engine_.get());
}

ServerHarness::~ServerHarness() {
  server_->BeginShutdown();
  if (engine_) engine_->Shutdown(5);
  server_->Stop(5);
  server_.reset();
  engine_.reset();
}

httplib::Client ServerHarness::Client() const {
  httplib::Client client("127.0.0.1", port());
  client.set_read_timeout(120, 0);
  client.set_write_timeout(120, 0);
  return client;
}

namespace {

HttpResult ToResult(const httplib::Result& result) {
  HttpResult out;
  if (!result) {
    ADD_FAILURE() << "HTTP request failed: " << httplib::to_string(result.error());
    return out;
  }
  out.status = result->status;
  out.body = result->body;
  out.content_type = result->get_header_value("Content-Type");
  if (out.content_type.rfind("application/json", 0) == 0) {
    out.json = nlohmann::json::parse(out.body, nullptr, /*allow_exceptions=*/false);
  }
  return out;
}

}  // namespace

HttpResult PostJson(const ServerHarness& harness, const std::string& path, const std::string& body,
                    const httplib::Headers& headers) {
  httplib::Client client = harness.Client();
  return ToResult(client.Post(path.c_str(), headers, body, "application/json"));
}

HttpResult Get(const ServerHarness& harness, const std::string& path,
               const httplib::Headers& headers) {
  httplib::Client client = harness.Client();
  return ToResult(client.Get(path.c_str(), headers));
}

std::vector<nlohmann::json> SseEvents(const std::string& body) {
  std::vector<nlohmann::json> events;
  size_t start = 0;
  while (start < body.size()) {
    size_t end = body.find("\n\n", start);
    if (end == std::string::npos) end = body.size();
    const std::string event = body.substr(start, end - start);
    // The data line leads the event, or follows its "event: NAME" line (Responses).
    const size_t line = event.rfind("data: ", 0) == 0 ? 0 : event.find("\ndata: ");
    if (line != std::string::npos) {
      const std::string data = event.substr(line == 0 ? 6 : line + 7);
      events.push_back(data == "[DONE]" ? nlohmann::json("[DONE]") : nlohmann::json::parse(data));
    }
    start = end + 2;
  }
  return events;
}

std::string StreamedText(const std::vector<nlohmann::json>& events) {
  std::string text;
  for (const nlohmann::json& e : events) {
    if (!e.is_object() || !e.contains("choices") || e["choices"].empty()) continue;
    const nlohmann::json& delta = e["choices"][0]["delta"];
    if (delta.contains("content") && delta["content"].is_string()) text += delta["content"];
  }
  return text;
}

std::string MetricsHolding(const ServerHarness& harness, const std::string& text,
                           const httplib::Headers& headers) {
  std::string metrics;
  for (int i = 0; i < 500 && metrics.find(text) == std::string::npos; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    metrics = Get(harness, "/metrics", headers).body;
  }
  return metrics;
}

double MetricValue(const std::string& metrics_text, const std::string& name) {
  std::istringstream lines(metrics_text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  }
  return -1;
}

}  // namespace qvl::testing
