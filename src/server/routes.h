// The server's routes, one table: which paths exist, the methods each takes (for 405's
// Allow header) and the label /metrics counts them under, so that a path a client makes
// up (a model id, a typo) never grows the label set.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/api_error.h"

namespace qvl {

struct KnownRoute {
  std::string_view label;  // "/v1/models/{id}" for every model id
  std::string_view allow;  // the methods the route takes, as the Allow header lists them
};

// The route `path` belongs to, or nullopt for a path that is no route (web page assets
// included: they are served or 404, never 405). An alias (PathsOf) belongs to the route
// it stands for.
std::optional<KnownRoute> FindRoute(std::string_view path);

// The paths `route` is served on: itself, then its aliases. llama-server also answers
// on /chat/completions, /completions, /models and /v1/health, which clients given the
// server's address without /v1 as their base URL call.
std::vector<std::string> PathsOf(std::string_view route);

// `path` with every run of '/' written as one: "//v1/chat/completions" -> "/v1/chat/completions".
// Clients send such paths when they join a base URL ending in '/' with a path starting
// with one (OPENAI_BASE_URL=http://127.0.0.1:8080/v1/, OLLAMA_HOST=http://127.0.0.1:8080/).
// llama-server and vLLM answer them 404 and Ollama 404 or a 301 (which clients follow
// with a GET); qvl routes them as the path meant, as nginx's merge_slashes does. Nothing
// is lost: no route, model id or response id holds an empty segment.
std::string MergedSlashes(std::string_view path);

// How errors about `path` are written: Ollama's shape under /api/, Anthropic's under
// /v1/messages, else OpenAI's.
ErrorShape ErrorShapeFor(std::string_view path);

// "/v1/models/Qwen/Qwen3-VL-2B-Instruct" -> "Qwen/Qwen3-VL-2B-Instruct"; "" for any other
// path. Ids may hold '/'.
std::string_view ModelIdInPath(std::string_view path);
// "/v1/responses/resp_123" -> "resp_123"; "" for any other path.
std::string_view ResponseIdInPath(std::string_view path);

}  // namespace qvl
