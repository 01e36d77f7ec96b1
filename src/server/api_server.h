// qvl's HTTP server: the OpenAI-compatible API, health, metrics and the web page. It
// listens before the model is loaded (/health answers 503 until then), shares one
// engine between all clients, and shuts down gracefully.
#pragma once

#include <httplib.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine.h"
#include "server/chat_request.h"
#include "server/gated_http_server.h"
#include "server/response_store.h"
#include "server/server_metrics.h"
#include "share/shared_cache.h"

namespace qvl {

struct ApiServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;      // 0 = any free port (see ApiServer::port)
  std::string api_key;  // non-empty: every route but /health and the web page needs it
  // Served model id first, then aliases: the accepted "model" values and /v1/models.
  std::vector<std::string> model_names = {"qvl"};
  size_t max_body_bytes = size_t{64} << 20;
  int io_timeout_seconds = 30;  // per read or write on a connection
  int http_threads = 32;        // connections served at once (streams hold one each)
  ChatRequestPolicy request;    // model_names is filled from above
  std::string cors_origin = "*";
  // Image encodings and answers shared with other replicas (--redis); null = none.
  std::shared_ptr<SharedCache> shared_cache;
  // /v1/responses kept for previous_response_id and GET /v1/responses/{id}; shared with
  // the other replicas through shared_cache when there is one.
  ResponseStoreOptions response_store;
};

class ApiServer {
 public:
  explicit ApiServer(ApiServerOptions options);
  ~ApiServer();  // stops listening and joins
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds host:port and starts serving on a background thread. Throws
  // Error(kIo) when the address cannot be bound.
  void Start();
  int port() const { return port_; }

  // The engine that answers requests from now on; /health turns 200. Not owned: it must
  // outlive Stop().
  void SetEngine(Engine* engine);
  // New chat requests get 503 from now on; requests in flight continue.
  void BeginShutdown();
  // Waits up to `wait_seconds` for responses in flight to be written, then closes the
  // listening socket and joins the server threads.
  void Stop(double wait_seconds);

  ServerMetrics& metrics() { return metrics_; }

 private:
  void AddRoutes();
  bool Authorized(const httplib::Request& req) const;
  void HandleHealth(httplib::Response& res) const;
  void HandleModels(const httplib::Request& req, httplib::Response& res) const;
  void HandleModel(const httplib::Request& req, httplib::Response& res) const;
  void HandleStoredResponse(const httplib::Request& req, httplib::Response& res);
  void HandleDeleteResponse(const httplib::Request& req, httplib::Response& res);
  // Ollama's model descriptions (ollama_route.h): /api/tags, /api/ps, /api/show.
  void HandleOllamaModels(const httplib::Request& req, httplib::Response& res, bool running) const;
  void HandleOllamaShow(const httplib::Request& req, httplib::Response& res,
                        const httplib::ContentReader& reader) const;
  void HandleMetrics(const httplib::Request& req, httplib::Response& res) const;
  void HandleProps(const httplib::Request& req, httplib::Response& res) const;
  void HandleWebPage(const httplib::Request& req, httplib::Response& res) const;

  ApiServerOptions options_;
  GatedHttpServer http_;  // slow or oversized request heads never reach a thread
  std::thread listener_;
  int port_ = 0;
  std::atomic<Engine*> engine_{nullptr};
  std::atomic<bool> shutting_down_{false};
  std::atomic<int> in_flight_{0};
  ServerMetrics metrics_;
  std::unique_ptr<ResponseStore> responses_;
  int64_t started_at_ = 0;
};

// Compares without an early exit, so the time taken does not reveal how much of a guessed
// key was right.
bool ConstantTimeEquals(const std::string& a, const std::string& b);

}  // namespace qvl
