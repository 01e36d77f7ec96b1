// POST /v1/embeddings (OpenAI's embeddings API, with vLLM's chat-style form for images),
// Ollama's POST /api/embed and its older POST /api/embeddings (one "prompt", answered
// {"embedding": [...]}; many clients still call it): each input is a prompt the engine
// prefills, its embedding the last token's final-normed hidden state at unit length
// (GenerationRequest::embed); all inputs go to the engine at once, so they prefill in the
// same batches, and the answer is one JSON body (embeddings_encoder.h).
#pragma once

#include <httplib.h>

#include "server/generation_route.h"

namespace qvl {

void HandleEmbeddings(const GenerationRouteContext& context, const httplib::Request& req,
                      httplib::Response& res, const httplib::ContentReader& reader);

void HandleOllamaEmbed(const GenerationRouteContext& context, const httplib::Request& req,
                       httplib::Response& res, const httplib::ContentReader& reader);

void HandleOllamaEmbeddings(const GenerationRouteContext& context, const httplib::Request& req,
                            httplib::Response& res, const httplib::ContentReader& reader);

}  // namespace qvl
