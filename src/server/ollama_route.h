// Ollama's API beside the OpenAI one, for the tools and clients written for Ollama.
// POST /api/chat and /api/generate answer through the same engine, checks and caches as
// the OpenAI routes (see generation_route.h), with errors as Ollama writes them
// ({"error": "..."}). GET /api/tags, GET /api/ps, POST /api/show and GET /api/version
// describe the one model qvl serves; qvl serves the model it was started with, so
// pulling, pushing, creating, copying and deleting models are no routes.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/generation_route.h"

namespace qvl {

void HandleOllamaChat(const GenerationRouteContext& context, const httplib::Request& req,
                      httplib::Response& res, const httplib::ContentReader& reader);
void HandleOllamaGenerate(const GenerationRouteContext& context, const httplib::Request& req,
                          httplib::Response& res, const httplib::ContentReader& reader);

// GET /api/tags (and /api/ps with `running`): every served name as a model of Ollama's
// list, `started_at` (Unix seconds) as its modification time.
nlohmann::json OllamaModelsJson(const std::vector<std::string>& names, const Engine& engine,
                                int64_t started_at, bool running);
// POST /api/show for `name`: details, the chat template, the default sampling as
// Ollama's "parameters" text, model_info and capabilities.
nlohmann::json OllamaShowJson(const std::string& name, const Engine& engine, int64_t started_at);
// GET /api/version: the Ollama API level these routes follow.
nlohmann::json OllamaVersionJson();

}  // namespace qvl
