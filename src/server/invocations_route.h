// POST /invocations: the inference route of Amazon SageMaker's container contract (with
// GET /ping, an alias of /health, on port 8080), as vLLM serves it: one route takes the
// body of any generation API and answers as that API does. A body with `messages` is a
// chat completion, else one with `prompt` a text completion (/v1/completions), else one
// with `input` an embeddings request; streaming, errors and limits are those routes' own.
#pragma once

#include <httplib.h>

#include "server/generation_route.h"

namespace qvl {

void HandleInvocation(const GenerationRouteContext& context, const httplib::Request& req,
                      httplib::Response& res, const httplib::ContentReader& reader);

}  // namespace qvl
