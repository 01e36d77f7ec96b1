// X-Request-Id: every response names its request, so that a client, a proxy and the
// server's log speak of the same one. OpenAI's API answers every request with one (its
// SDKs expose it as _request_id) and vLLM echoes the one a client sends; qvl does both.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace qvl {

inline constexpr char kRequestIdHeader[] = "X-Request-Id";

// The longest client id echoed: a UUID (36) with a gateway's prefix, or a W3C traceparent
// (55), fits; a longer one would only bloat every log line.
inline constexpr size_t kMaxClientRequestIdLength = 128;

// Whether a client's id is echoed and logged as it came: 1 to kMaxClientRequestIdLength
// visible ASCII characters (no space, no control character, nothing outside ASCII).
bool IsSaneRequestId(std::string_view id);

// A fresh id: "req_" and 24 random hex digits.
std::string NewRequestId();

// Gives `res` the X-Request-Id of `req` unless it has one: the client's own when sane,
// else a fresh one.
void SetRequestId(const httplib::Request& req, httplib::Response& res);

}  // namespace qvl
