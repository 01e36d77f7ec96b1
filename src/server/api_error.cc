#include "server/api_error.h"

#include <new>

#include "base/field_error.h"

namespace qvl {

int HttpStatusFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kContextLength:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kTooLarge:
      return 413;
    case ErrorCode::kUnauthenticated:
      return 401;
    case ErrorCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

ApiError MakeApiError(ErrorCode code, std::string message, std::string param) {
  ApiError e;
  e.status = HttpStatusFor(code);
  e.message = std::move(message);
  e.param = std::move(param);
  switch (code) {
    case ErrorCode::kInvalidArgument:
      e.type = "invalid_request_error";
      e.code = "invalid_value";
      break;
    case ErrorCode::kContextLength:
      // OpenAI's code, by which clients (LiteLLM, CrewAI, LangChain) know to shorten the
      // conversation and retry.
      e.type = "invalid_request_error";
      e.code = "context_length_exceeded";
      break;
    case ErrorCode::kNotFound:
      e.type = "invalid_request_error";
      e.code = e.param == "model" ? "model_not_found" : "not_found";
      break;
    case ErrorCode::kTooLarge:
      e.type = "invalid_request_error";
      e.code = "too_large";
      break;
    case ErrorCode::kUnauthenticated:
      e.type = "authentication_error";
      e.code = "invalid_api_key";
      break;
    case ErrorCode::kUnavailable:
      e.type = "server_error";
      e.code = "unavailable";
      break;
    default:
      e.type = "server_error";
      e.code = "internal_error";
      break;
  }
  return e;
}

ApiError ApiErrorFrom(const std::exception& error) {
  if (const auto* field = dynamic_cast<const FieldError*>(&error)) {
    return MakeApiError(field->code(), field->what(), field->field());
  }
  if (const auto* e = dynamic_cast<const Error*>(&error)) return MakeApiError(e->code(), e->what());
  if (dynamic_cast<const std::bad_alloc*>(&error) != nullptr) {
    return MakeApiError(ErrorCode::kUnavailable, "the server is out of memory for this request");
  }
  return MakeApiError(ErrorCode::kInternal, StrCat("internal error: ", error.what()));
}

const char* AnthropicErrorType(int status) {
  switch (status) {
    case 400:
    case 405:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    default:
      return "api_error";
  }
}

nlohmann::json ApiErrorJson(const ApiError& e, ErrorShape shape) {
  if (shape == ErrorShape::kOllama) return {{"error", e.message}};
  if (shape == ErrorShape::kAnthropic) {
    return {{"type", "error"},
            {"error", {{"type", AnthropicErrorType(e.status)}, {"message", e.message}}}};
  }
  auto or_null = [](const std::string& s) {
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
  };
  return {{"error",
           {{"message", e.message},
            {"type", e.type},
            {"param", or_null(e.param)},
            {"code", or_null(e.code)}}}};
}

}  // namespace qvl
