// POST /completion: llama-server's native completion API (not OpenAI's), which tools
// written for llama-server call (SillyTavern's llama.cpp backend, KoboldAI-style front
// ends, editor plugins). The prompt is raw text or token ids, tokenized as is (no chat
// template); native_completion_request.h reads it, native_completion_encoder.h answers.
#pragma once

#include <httplib.h>

#include "server/generation_route.h"

namespace qvl {

void HandleNativeCompletion(const GenerationRouteContext& context, const httplib::Request& req,
                            httplib::Response& res, const httplib::ContentReader& reader);

}  // namespace qvl
