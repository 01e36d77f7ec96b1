// POST /v1/chat/completions: parses and checks the body as a chat request and answers
// it in OpenAI's chat completion format (see generation_route.h for the rest).
#pragma once

#include <httplib.h>

#include "server/generation_route.h"

namespace qvl {

void HandleChatCompletion(const GenerationRouteContext& context, const httplib::Request& req,
                          httplib::Response& res, const httplib::ContentReader& reader);

}  // namespace qvl
