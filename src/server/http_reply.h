// Small helpers every route uses to answer: JSON bodies and OpenAI error objects.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "server/api_error.h"

namespace qvl {

void ReplyJson(httplib::Response& res, int status, const nlohmann::json& body);
void ReplyError(httplib::Response& res, const ApiError& error,
                ErrorShape shape = ErrorShape::kOpenAI);
// 401 for a request without the server's API key.
void ReplyUnauthorized(httplib::Response& res, ErrorShape shape = ErrorShape::kOpenAI);

}  // namespace qvl
