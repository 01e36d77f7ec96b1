// Errors as OpenAI's API reports them: an HTTP status and
// {"error":{"message","type","param","code"}}. Bad input is never a 500.
#pragma once

#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"

namespace qvl {

struct ApiError {
  int status = 500;
  std::string message;
  std::string type;   // "invalid_request_error", "authentication_error", ...
  std::string param;  // the request field at fault; empty = null
  std::string code;   // "model_not_found", "invalid_api_key", ...; empty = null
};

// 400 kInvalidArgument, 404 kNotFound, 413 kTooLarge, 401 kUnauthenticated,
// 503 kUnavailable, 500 otherwise.
int HttpStatusFor(ErrorCode code);

ApiError MakeApiError(ErrorCode code, std::string message, std::string param = "");

// The ApiError for a caught exception: qvl::Error by its code (FieldError also fills
// param), anything else a 500 "internal error: ...".
ApiError ApiErrorFrom(const std::exception& error);

// How an API writes its errors: OpenAI's {"error": {"message", "type", "param", "code"}},
// Ollama's {"error": "message"} or Anthropic's {"type": "error", "error": {"type",
// "message"}}, whose type says what the status says (AnthropicErrorType).
enum class ErrorShape { kOpenAI, kOllama, kAnthropic };

// Anthropic's error type for an HTTP status: invalid_request_error (400, 405),
// authentication_error (401), permission_error (403), not_found_error (404),
// request_too_large (413), rate_limit_error (429), overloaded_error (503, 529),
// api_error otherwise.
const char* AnthropicErrorType(int status);

nlohmann::json ApiErrorJson(const ApiError& error, ErrorShape shape = ErrorShape::kOpenAI);

}  // namespace qvl
