// POST /invocations: the inference route of Amazon SageMaker's container contract (with
// GET /ping, an alias of /health, on port 8080), as vLLM serves it: one route takes the
// body of any generation API and answers as that API does. A body with `messages` is a
// chat completion, else one with `prompt` a text completion (/v1/completions), else one
// with `input` an embeddings request; streaming, errors and limits are those routes' own.
#pragma once

#include <httplib.h>

#include <string_view>

#include "server/generation_route.h"

namespace qvl {

// The route an invocation body goes to: "/v1/chat/completions", "/v1/completions" or
// "/v1/embeddings" by its top-level keys as above; "/v1/chat/completions" for a body that
// is not JSON (that route names the syntax error); empty for an object with none of them.
std::string_view InvocationRoute(std::string_view body);

void HandleInvocation(const GenerationRouteContext& context, const httplib::Request& req,
                      httplib::Response& res, const httplib::ContentReader& reader);

}  // namespace qvl
