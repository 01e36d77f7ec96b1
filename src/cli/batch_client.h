// `qvl batch`'s work: the requests of an OpenAI Batch API input file (JSON lines of
// {"custom_id", "method": "POST", "url", "body"}) sent to a running OpenAI-compatible
// server (qvl serve, or replicas behind a proxy) several at a time, and one line of the
// Batch API's output format written per request, in the input's order: {"id",
// "custom_id", "response": {"status_code", "request_id", "body"}, "error"}. A line that
// is not such a request gets an "error" and no response; a server's 4xx/5xx is a response.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>

namespace qvl::cli {

struct BatchOptions {
  // http://HOST[:PORT][/PREFIX]: a base URL ending in /v1 (OpenAI's) takes the lines'
  // /v1/... paths as they are.
  std::string url = "http://127.0.0.1:8080";
  std::string api_key;  // sent as a bearer token when not empty
  int concurrency = 4;  // requests in flight
  int timeout_seconds = 3600;
  // 429 and 503 (a full queue, a server still loading) are tried again this many times,
  // 1, 2, 4 ... seconds apart (at most 30).
  int retries = 8;
};

struct BatchSummary {
  int64_t requests = 0;
  int64_t answered = 0;  // a 2xx response
  int64_t failed = 0;    // any other response, or a line that was no request
};

// Throws Error(kInvalidArgument) for a URL it cannot use; everything else is reported in
// the output lines.
BatchSummary RunBatch(std::istream& in, std::ostream& out, const BatchOptions& options);

}  // namespace qvl::cli
