#include "server/http_reply.h"

#include "server/access_log.h"
#include "server/openai_format.h"

namespace qvl {

void ReplyJson(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(JsonText(body), "application/json");
}

void ReplyError(httplib::Response& res, const ApiError& error, ErrorShape shape) {
  if (error.status == 503) res.set_header("Retry-After", "5");
  if (error.status == 401) res.set_header("WWW-Authenticate", "Bearer");
  RecordError(error.message);
  ReplyJson(res, error.status, ApiErrorJson(error, shape));
}

void ReplyUnauthorized(httplib::Response& res, ErrorShape shape) {
  // Anthropic's clients send their key as x-api-key, which qvl takes on every route.
  ReplyError(res,
             MakeApiError(ErrorCode::kUnauthenticated,
                          shape == ErrorShape::kAnthropic
                              ? "missing or wrong API key; send \"x-api-key: <key>\""
                              : "missing or wrong API key; send \"Authorization: Bearer <key>\""),
             shape);
}

}  // namespace qvl
