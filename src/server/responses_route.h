// POST /v1/responses: parses and checks the body as a Responses request and answers it
// in OpenAI's Response format (see generation_route.h for the rest).
#pragma once

#include <httplib.h>

#include "server/generation_route.h"

namespace qvl {

void HandleResponse(const GenerationRouteContext& context, const httplib::Request& req,
                    httplib::Response& res, const httplib::ContentReader& reader);

}  // namespace qvl
