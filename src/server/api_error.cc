#include "server/api_error.h"

#include <new>

#include "base/field_error.h"

namespace qvl {

namespace {

// How OpenAI reports each kind of error: its HTTP status, type and code.
struct ErrorKind {
  int status;
  const char* type;
  const char* code;
};

ErrorKind KindOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return {400, "invalid_request_error", "invalid_value"};
    case ErrorCode::kContextLength:
      // OpenAI's code, by which clients (LiteLLM, CrewAI, LangChain) know to shorten the
      // conversation and retry.
      return {400, "invalid_request_error", "context_length_exceeded"};
    case ErrorCode::kNotFound:
      return {404, "invalid_request_error", "not_found"};
    case ErrorCode::kTooLarge:
      return {413, "invalid_request_error", "too_large"};
    case ErrorCode::kUnauthenticated:
      return {401, "authentication_error", "invalid_api_key"};
    case ErrorCode::kUnavailable:
      return {503, "server_error", "unavailable"};
    default:
      return {500, "server_error", "internal_error"};
  }
}

}  // namespace

int HttpStatusFor(ErrorCode code) { return KindOf(code).status; }

ApiError MakeApiError(ErrorCode code, std::string message, std::string param) {
  const ErrorKind kind = KindOf(code);
  ApiError e;
  e.status = kind.status;
  e.message = std::move(message);
  e.param = std::move(param);
  e.type = kind.type;
  e.code = code == ErrorCode::kNotFound && e.param == "model" ? "model_not_found" : kind.code;
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
