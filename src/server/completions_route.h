// POST /v1/completions: the legacy OpenAI text completion API, as vLLM and llama-server
// serve it. The prompt is raw text, tokenized as is (no chat template).
#pragma once

#include <httplib.h>

#include "server/generation_route.h"

namespace qvl {

void HandleTextCompletion(const GenerationRouteContext& context, const httplib::Request& req,
                          httplib::Response& res, const httplib::ContentReader& reader);

}  // namespace qvl
