// POST /v1/chat/completions: reads the body within its limit, parses and checks it,
// submits it to the engine and answers from the engine's updates — streamed as
// server-sent events or as one JSON completion. The HTTP thread only parses, enqueues
// and relays; a client that disconnects or stops reading cancels its request at once.
#pragma once

#include <httplib.h>

#include <atomic>
#include <functional>
#include <string>

#include "engine/engine.h"
#include "server/chat_request.h"
#include "server/server_metrics.h"
#include "share/shared_cache.h"

namespace qvl {

struct ChatRouteContext {
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
};

void HandleChatCompletion(const ChatRouteContext& context, const httplib::Request& req,
                          httplib::Response& res, const httplib::ContentReader& reader);

// Reads the whole body into `body` unless it is over `max_bytes`; on failure answers
// 413 (too large) or 400 (unreadable) and returns false.
bool ReadBody(const httplib::ContentReader& reader, size_t max_bytes, httplib::Response& res,
              std::string* body);

}  // namespace qvl
