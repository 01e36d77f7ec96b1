// What every route that generates (/v1/chat/completions, /v1/completions) does around
// its own parsing: checks the key before reading the body, reads the body within its
// limit, refuses work while loading or shutting down, submits the request to the engine
// and answers from the engine's updates through the route's encoder — streamed or as one
// body. The HTTP thread only parses, enqueues and relays; a client that disconnects or
// stops reading cancels its request at once.
#pragma once

#include <httplib.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/api_error.h"
#include "server/chat_request.h"
#include "server/response_encoder.h"
#include "server/response_store.h"
#include "server/server_metrics.h"
#include "share/shared_cache.h"

namespace qvl {

struct GenerationRouteContext {
  ChatRequestPolicy policy;
  size_t max_body_bytes = size_t{64} << 20;
  std::function<bool(const httplib::Request&)> authorized;
  // The engine once the model is loaded, else null; set by the server.
  const std::atomic<Engine*>* engine = nullptr;
  const std::atomic<bool>* shutting_down = nullptr;
  ServerMetrics* metrics = nullptr;
  // Responses still being written; the server waits for them on shutdown.
  std::atomic<int>* in_flight = nullptr;
  SharedCache* shared_cache = nullptr;  // answers of deterministic requests; may be null
  ResponseStore* responses = nullptr;   // /v1/responses kept for previous_response_id; may be null
  ErrorShape errors = ErrorShape::kOpenAI;  // how the route's API writes errors
};

// A route that reads its request's body itself (through `reader`), as every generation
// route does.
using BodyRoute = void (*)(const GenerationRouteContext&, const httplib::Request&,
                           httplib::Response&, const httplib::ContentReader&);

// Reads the whole body into `body` unless it is over `max_bytes`; on failure answers
// 413 (too large) or 400 (unreadable) and returns false.
bool ReadBody(const httplib::ContentReader& reader, size_t max_bytes, httplib::Response& res,
              std::string* body, ErrorShape errors = ErrorShape::kOpenAI);

// Checks the key, reads the body and checks that the engine takes work. Returns the
// engine, or null after answering 401, 413, 400 or 503. `upload_ms` gets the time the
// body took to arrive (timings.upload_ms).
Engine* AcceptGenerationRequest(const GenerationRouteContext& context, const httplib::Request& req,
                                httplib::Response& res, const httplib::ContentReader& reader,
                                std::string* body, double* upload_ms);

// context.policy with the limits of the loaded model (image token size, context).
ChatRequestPolicy PolicyForEngine(const ChatRequestPolicy& policy, const Engine& engine);

// The "model" of every response: as the client named it, else the served id.
std::string ResponseModelName(const GenerationRouteContext& context, const std::string& asked);

// The shared answer cache's key of a parsed request (answer_cache.h; `route` as there),
// nullopt without a cache; frees `body`, which the rest of the request does not need.
std::optional<std::string> TakeAnswerKey(const GenerationRouteContext& context, std::string* body,
                                         const GenerationRequest& request, const Engine& engine,
                                         std::string_view route = "");

// Submits `request` and answers from its updates through `encoder`: streamed when
// `stream` (the encoder's ContentType), else one JSON body; `upload_ms` (from
// AcceptGenerationRequest) goes into its timings. A refused submission is answered with
// its error. With an `answer_key` (see answer_cache.h) a shared answer is replayed instead of
// computed, and a computed one is stored for the other replicas.
void RespondWithGeneration(const GenerationRouteContext& context, Engine* engine,
                           GenerationRequest request, std::unique_ptr<ResponseEncoder> encoder,
                           bool stream, double upload_ms, httplib::Response& res,
                           const std::optional<std::string>& answer_key = std::nullopt);

// A completion of one or several prompts (/v1/completions, /completion): one goes through
// RespondWithGeneration with its answer key (TakeAnswerKey of `body` and `route`), several
// through RespondWithGenerations. Frees `body`.
void RespondWithPrompts(const GenerationRouteContext& context, Engine* engine,
                        std::vector<GenerationRequest> prompts,
                        std::unique_ptr<ResponseEncoder> encoder, bool stream, double upload_ms,
                        std::string* body, std::string_view route, httplib::Response& res);

// Submits every request of `requests` and answers through `encoder` from all their
// updates (an embeddings request's inputs, a text completion's prompts), streamed when
// `stream`: answer j of request i arrives as `choice` i * n + j, n being the requests'
// GenerationRequest::n. One refused submission cancels those already made and is the answer.
void RespondWithGenerations(const GenerationRouteContext& context, Engine* engine,
                            std::vector<GenerationRequest> requests,
                            std::unique_ptr<ResponseEncoder> encoder, bool stream, double upload_ms,
                            httplib::Response& res);

}  // namespace qvl
