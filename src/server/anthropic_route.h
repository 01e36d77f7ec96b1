// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API, parsed and
// checked as an Anthropic request (anthropic_request.h) and answered in Anthropic's
// shapes, errors included ({"type": "error", "error": {"type", "message"}}). See
// generation_route.h for the rest.
#pragma once

#include <httplib.h>

#include "server/generation_route.h"

namespace qvl {

void HandleAnthropicMessages(const GenerationRouteContext& context, const httplib::Request& req,
                             httplib::Response& res, const httplib::ContentReader& reader);

// {"input_tokens": N}: the prompt's tokens, images included, as /v1/messages would
// prefill them.
void HandleAnthropicCountTokens(const GenerationRouteContext& context, const httplib::Request& req,
                                httplib::Response& res, const httplib::ContentReader& reader);

}  // namespace qvl
