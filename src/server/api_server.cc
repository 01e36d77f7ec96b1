#include "server/api_server.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <optional>

#include "base/log.h"
#include "model/qwen3vl.h"
#include "server/access_log.h"
#include "server/anthropic_route.h"
#include "server/chat_route.h"
#include "server/completions_route.h"
#include "server/embeddings_route.h"
#include "server/http_reply.h"
#include "server/invocations_route.h"
#include "server/native_completion_route.h"
#include "server/ollama_request.h"
#include "server/ollama_route.h"
#include "server/openai_format.h"
#include "server/props.h"
#include "server/request_id.h"
#include "server/responses_request.h"
#include "server/responses_route.h"
#include "server/routes.h"
#include "server/served_models.h"
#include "server/tokenize_route.h"
#include "server/web_page.h"

namespace qvl {
namespace {

// What the model objects of /v1/models tell once the model is loaded; nothing before.
std::optional<ServedModelSizes> SizesOf(const Engine* engine) {
  if (engine == nullptr) return std::nullopt;
  const TextConfig& text = engine->model().config().text;
  return ServedModelSizes{engine->options().context_tokens, text.max_position_embeddings,
                          text.vocab_size, text.hidden_size};
}

bool IsLoopbackHost(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1";
}

void ReplyNoRoute(const httplib::Request& req, httplib::Response& res) {
  ReplyError(res,
             MakeApiError(ErrorCode::kNotFound, StrCat("no route ", req.method, " ", req.path)),
             ErrorShapeFor(req.path));
}

// A known route asked with a method it does not take.
void ReplyMethodNotAllowed(const httplib::Request& req, httplib::Response& res,
                           const KnownRoute& route) {
  ApiError error = MakeApiError(
      ErrorCode::kInvalidArgument,
      StrCat(req.method, " ", req.path, " is not allowed; this route takes ", route.allow));
  error.status = 405;
  error.code = "method_not_allowed";
  res.set_header("Allow", std::string(route.allow));
  ReplyError(res, error, ErrorShapeFor(req.path));
}

void ReplyNoStoredResponse(std::string_view id, httplib::Response& res) {
  ReplyError(res, MakeApiError(ErrorCode::kNotFound, NoStoredResponse(id)));
}

}  // namespace

bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  // The length is not secret; the bytes are.
  if (a.size() != b.size()) return false;
  volatile unsigned char difference = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    difference = difference | static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return difference == 0;
}

ApiServer::ApiServer(ApiServerOptions options)
    : options_(std::move(options)),
      http_(GateLimits{.head_timeout_ms = options_.io_timeout_seconds * 1000}) {
  if (options_.model_names.empty()) options_.model_names.push_back("qvl");
  options_.request.model_names = options_.model_names;
  started_at_ = static_cast<int64_t>(std::time(nullptr));
  responses_ =
      std::make_unique<ResponseStore>(options_.response_store, options_.shared_cache.get());
  const int threads = std::max(options_.http_threads, 4);
  http_.SetWorkerThreads(threads);
  http_.set_payload_max_length(options_.max_body_bytes);
  http_.set_read_timeout(options_.io_timeout_seconds, 0);
  http_.set_write_timeout(options_.io_timeout_seconds, 0);
  http_.set_keep_alive_timeout(5);
  // Allow-Headers names every header the openai SDK sends from a page (its stream, parse
  // and runTools helpers add X-Stainless-Helper-Method) and the anthropic SDK's own: a
  // browser refuses the request when its preflight names one that is not listed.
  http_.set_default_headers({
      {"Access-Control-Allow-Origin", options_.cors_origin},
      {"Access-Control-Allow-Headers",
       "Authorization, Content-Type, OpenAI-Organization, "
       "OpenAI-Project, X-Stainless-Lang, X-Stainless-Arch, "
       "X-Stainless-OS, X-Stainless-Runtime, "
       "X-Stainless-Runtime-Version, X-Stainless-Package-Version, "
       "X-Stainless-Retry-Count, X-Stainless-Timeout, X-Stainless-Helper-Method, "
       "X-Session-Id, X-Request-Id, X-Api-Key, Anthropic-Version, Anthropic-Beta, "
       "Anthropic-Dangerous-Direct-Browser-Access"},
      // DELETE for /v1/responses/{id}.
      {"Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS"},
      // What a page on another origin may read: when to ask again after a 429 or 503,
      // whether an answer came from the answer cache, and the id the log knows it by.
      {"Access-Control-Expose-Headers", "Retry-After, X-Qvl-Answer-Cache, X-Request-Id"},
      {"Access-Control-Max-Age", "600"},
  });
  AddRoutes();
}

ApiServer::~ApiServer() {
  if (listener_.joinable()) Stop(0);
}

void ApiServer::AddRoutes() {
  // Before everything that reads the path: routing, the metrics label, the error shape.
  http_.SetRequestSetup([](httplib::Request& req) { req.path = MergedSlashes(req.path); });
  http_.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    SetRequestId(req, res);
    BeginAccessRecord();
    if (req.method != "OPTIONS") return httplib::Server::HandlerResponse::Unhandled;
    res.status = 204;  // CORS preflight: the default headers say what is allowed
    return httplib::Server::HandlerResponse::Handled;
  });
  http_.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    metrics_.CountResponse(req.path, RecordedStatus(res));
    LogAccess(req, res);
  });
  http_.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    SetRequestId(req, res);  // a request too malformed to be routed has none yet
    if (!res.body.empty()) return;
    if (res.status == 404) {
      ReplyNoRoute(req, res);
    } else if (res.status == 413) {
      ReplyError(res, MakeApiError(ErrorCode::kTooLarge, "the request body is too large"),
                 ErrorShapeFor(req.path));
    } else {
      ApiError error = MakeApiError(ErrorCode::kInvalidArgument, "malformed HTTP request");
      error.status = res.status;
      ReplyError(res, error, ErrorShapeFor(req.path));
    }
  });
  http_.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
        const ErrorShape shape = ErrorShapeFor(req.path);
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          ReplyError(res, ApiErrorFrom(e), shape);
        } catch (...) {
          ReplyError(res, MakeApiError(ErrorCode::kInternal, "internal error"), shape);
        }
      });

  for (const std::string& path : PathsOf("/health")) {
    http_.Get(path, [this](const httplib::Request&, httplib::Response& res) { HandleHealth(res); });
  }
  for (const std::string& path : PathsOf("/v1/models")) {
    http_.Get(path, [this](const httplib::Request& req, httplib::Response& res) {
      HandleModels(req, res);
    });
  }
  http_.Get("/v1/models/.+",
            [this](const httplib::Request& req, httplib::Response& res) { HandleModel(req, res); });
  http_.Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
    HandleMetrics(req, res);
  });
  http_.Get("/v1/responses/[^/]+", [this](const httplib::Request& req, httplib::Response& res) {
    HandleStoredResponse(req, res);
  });
  http_.Delete("/v1/responses/[^/]+",
               [this](const httplib::Request& req, httplib::Response& res,
                      const httplib::ContentReader&) { HandleDeleteResponse(req, res); });
  http_.Get("/props",
            [this](const httplib::Request& req, httplib::Response& res) { HandleProps(req, res); });

  GenerationRouteContext chat;
  chat.policy = options_.request;
  chat.max_body_bytes = options_.max_body_bytes;
  chat.authorized = [this](const httplib::Request& req) { return Authorized(req); };
  chat.engine = &engine_;
  chat.shutting_down = &shutting_down_;
  chat.metrics = &metrics_;
  chat.in_flight = &in_flight_;
  chat.shared_cache = options_.shared_cache.get();
  chat.responses = responses_.get();
  // The routes that read a body through GenerationRouteContext, each with its context.
  auto post = [this](const std::string& path, BodyRoute route,
                     const GenerationRouteContext& context) {
    http_.Post(path, [route, context](const httplib::Request& req, httplib::Response& res,
                                      const httplib::ContentReader& reader) {
      route(context, req, res, reader);
    });
  };
  for (const std::string& path : PathsOf("/v1/chat/completions")) {
    post(path, HandleChatCompletion, chat);
  }
  for (const std::string& path : PathsOf("/v1/completions")) {
    post(path, HandleTextCompletion, chat);
  }
  post("/completion", HandleNativeCompletion, chat);
  post("/v1/responses", HandleResponse, chat);
  for (const std::string& path : PathsOf("/v1/embeddings")) {
    post(path, HandleEmbeddings, chat);
  }
  GenerationRouteContext anthropic = chat;
  anthropic.errors = ErrorShape::kAnthropic;
  post("/v1/messages", HandleAnthropicMessages, anthropic);
  post("/v1/messages/count_tokens", HandleAnthropicCountTokens, anthropic);
  post("/tokenize", HandleTokenize, chat);
  post("/apply-template", HandleApplyTemplate, chat);
  post("/invocations", HandleInvocation, chat);
  post("/detokenize", HandleDetokenize, chat);
  GenerationRouteContext ollama = chat;
  ollama.errors = ErrorShape::kOllama;
  post("/api/chat", HandleOllamaChat, ollama);
  post("/api/generate", HandleOllamaGenerate, ollama);
  post("/api/embed", HandleOllamaEmbed, ollama);
  post("/api/embeddings", HandleOllamaEmbeddings, ollama);
  http_.Post("/api/show",
             [this](const httplib::Request& req, httplib::Response& res,
                    const httplib::ContentReader& reader) { HandleOllamaShow(req, res, reader); });
  http_.Get("/api/tags", [this](const httplib::Request& req, httplib::Response& res) {
    HandleOllamaModels(req, res, false);
  });
  http_.Get("/api/ps", [this](const httplib::Request& req, httplib::Response& res) {
    HandleOllamaModels(req, res, true);
  });
  http_.Get("/api/version", [](const httplib::Request&, httplib::Response& res) {
    ReplyJson(res, 200, OllamaVersionJson());
  });

  // Every other request with a body is refused without reading it (GatedHttpServer then
  // closes the connection), so that no route buffers a body it has no use for.
  auto refuse = [](const httplib::Request& req, httplib::Response& res,
                   const httplib::ContentReader&) {
    if (const std::optional<KnownRoute> route = FindRoute(req.path)) {
      return ReplyMethodNotAllowed(req, res, *route);
    }
    ReplyNoRoute(req, res);
  };
  http_.Post(".*", refuse);
  http_.Put(".*", refuse);
  http_.Patch(".*", refuse);
  http_.Delete(".*", refuse);
  http_.Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
    HandleWebPage(req, res);
  });
}

bool ApiServer::Authorized(const httplib::Request& req) const {
  if (options_.api_key.empty()) return true;
  // Anthropic's SDKs send the key as x-api-key instead of a bearer token.
  if (req.has_header("x-api-key")) {
    return ConstantTimeEquals(req.get_header_value("x-api-key"), options_.api_key);
  }
  const std::string header = req.get_header_value("Authorization");
  // The scheme is case-insensitive (RFC 9110): some clients write "bearer".
  constexpr std::string_view kBearer = "bearer ";
  if (header.size() <= kBearer.size()) return false;
  for (size_t i = 0; i < kBearer.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != kBearer[i]) return false;
  }
  return ConstantTimeEquals(header.substr(kBearer.size()), options_.api_key);
}

void ApiServer::HandleHealth(httplib::Response& res) const {
  if (shutting_down_.load()) {
    ReplyJson(res, 503, {{"status", "shutting down"}});
  } else if (engine_.load() == nullptr) {
    res.set_header("Retry-After", "5");
    ReplyJson(res, 503, {{"status", "loading"}});
  } else {
    ReplyJson(res, 200, {{"status", "ok"}, {"model", options_.model_names.front()}});
  }
}

void ApiServer::HandleModels(const httplib::Request& req, httplib::Response& res) const {
  if (!Authorized(req)) return ReplyUnauthorized(res);
  ReplyJson(res, 200, ModelListJson(options_.model_names, started_at_, SizesOf(engine_.load())));
}

void ApiServer::HandleProps(const httplib::Request& req, httplib::Response& res) const {
  if (!Authorized(req)) return ReplyUnauthorized(res);
  // The limits are the loaded engine's; none are known for certain before it is.
  Engine* engine = engine_.load();
  if (engine == nullptr) {
    res.set_header("Retry-After", "5");
    return ReplyError(res, MakeApiError(ErrorCode::kUnavailable,
                                        "the model is still loading; retry in a few seconds"));
  }
  ReplyJson(res, 200, PropsJson(options_, *engine));
}

void ApiServer::HandleMetrics(const httplib::Request& req, httplib::Response& res) const {
  if (!Authorized(req)) return ReplyUnauthorized(res);
  Engine* engine = engine_.load();
  std::string text;
  if (engine != nullptr) {
    const EngineStats stats = engine->Stats();
    text = metrics_.Render(&stats, true);
  } else {
    text = metrics_.Render(nullptr, false);
  }
  if (options_.shared_cache) RenderSharedCacheCounters(options_.shared_cache->counters(), &text);
  res.status = 200;
  res.set_content(text, "text/plain; version=0.0.4; charset=utf-8");
}

void ApiServer::HandleModel(const httplib::Request& req, httplib::Response& res) const {
  if (!Authorized(req)) return ReplyUnauthorized(res);
  const std::string id(ModelIdInPath(req.path));
  RequireServedModel(id, options_.model_names);  // the exception handler answers 404
  ReplyJson(res, 200, ModelJson(id, started_at_, SizesOf(engine_.load())));
}

void ApiServer::HandleStoredResponse(const httplib::Request& req, httplib::Response& res) {
  if (!Authorized(req)) return ReplyUnauthorized(res);
  const std::string id(ResponseIdInPath(req.path));
  std::optional<StoredResponse> found = responses_->Get(id);
  if (!found) return ReplyNoStoredResponse(id, res);
  res.status = 200;
  res.set_content(std::move(found->response), "application/json");
}

void ApiServer::HandleDeleteResponse(const httplib::Request& req, httplib::Response& res) {
  if (!Authorized(req)) return ReplyUnauthorized(res);
  const std::string id(ResponseIdInPath(req.path));
  if (!responses_->Delete(id)) return ReplyNoStoredResponse(id, res);
  ReplyJson(res, 200, {{"id", id}, {"object", "response"}, {"deleted", true}});
}

void ApiServer::HandleOllamaModels(const httplib::Request& req, httplib::Response& res,
                                   bool running) const {
  if (!Authorized(req)) return ReplyUnauthorized(res, ErrorShape::kOllama);
  Engine* engine = engine_.load();
  if (engine == nullptr) {
    return ReplyError(
        res,
        MakeApiError(ErrorCode::kUnavailable, "the model is still loading; retry in a few seconds"),
        ErrorShape::kOllama);
  }
  ReplyJson(res, 200, OllamaModelsJson(options_.model_names, *engine, started_at_, running));
}

void ApiServer::HandleOllamaShow(const httplib::Request& req, httplib::Response& res,
                                 const httplib::ContentReader& reader) const {
  if (!Authorized(req)) return ReplyUnauthorized(res, ErrorShape::kOllama);
  constexpr size_t kMaxShowBody = 64 << 10;
  std::string body;
  if (!ReadBody(reader, kMaxShowBody, res, &body, ErrorShape::kOllama)) return;
  Engine* engine = engine_.load();
  try {
    const std::string name = OllamaModelName(body, options_.model_names);
    if (engine == nullptr) {
      Fail(ErrorCode::kUnavailable, "the model is still loading; retry in a few seconds");
    }
    ReplyJson(res, 200, OllamaShowJson(name, *engine, started_at_));
  } catch (const std::exception& e) {
    ReplyError(res, ApiErrorFrom(e), ErrorShape::kOllama);
  }
}

void ApiServer::HandleWebPage(const httplib::Request& req, httplib::Response& res) const {
  if (const std::optional<KnownRoute> route = FindRoute(req.path); route && route->allow != "GET") {
    return ReplyMethodNotAllowed(req, res, *route);
  }
  if (!ServeWebPage(req, res)) ReplyNoRoute(req, res);
}

void ApiServer::Start() {
  if (options_.port == 0) {
    port_ = http_.bind_to_any_port(options_.host);
  } else {
    port_ = http_.bind_to_port(options_.host, options_.port) ? options_.port : -1;
  }
  if (port_ <= 0) {
    Fail(ErrorCode::kIo, "cannot listen on ", options_.host, ":", options_.port,
         " (in use, or the address is not on this machine); give another --port (0: any free "
         "port) or --host");
  }
  http_.WidenBacklog();
  if (!IsLoopbackHost(options_.host) && options_.api_key.empty()) {
    LogWarn("listening on ", options_.host,
            " without --api-key: anyone who can reach this address can use the server");
  }
  listener_ = std::thread([this] { http_.listen_after_bind(); });
  // httplib's stop() does nothing until the server runs; Stop() must not race it.
  while (!http_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void ApiServer::SetEngine(Engine* engine) { engine_.store(engine); }

void ApiServer::BeginShutdown() { shutting_down_.store(true); }

void ApiServer::Stop(double wait_seconds) {
  shutting_down_.store(true);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(wait_seconds * 1000));
  while (in_flight_.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  http_.Shutdown();
  if (listener_.joinable()) listener_.join();
}

}  // namespace qvl
