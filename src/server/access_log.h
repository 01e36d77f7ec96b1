// One access line per HTTP request, logged once its response is written: time, the
// request's X-Request-Id (request_id.h), client, method, path, status, for generations the
// token counts, time to first token and the reason an answer was cut short, and for an
// error the message the client got. httplib runs a request's handler, its content
// provider and its logger on one thread, so the generation routes leave what they know
// in that thread's record, and the logger reads and clears it.
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>
#include <string_view>

#include "engine/request.h"

namespace qvl {

struct AccessRecord {
  bool started = false;  // BeginAccessRecord ran for this request
  std::chrono::steady_clock::time_point start;
  bool generated = false;  // a final engine update was seen
  Usage usage;
  int64_t image_tokens = 0;
  double ttft_ms = 0;
  // Why the request failed, the answer ended early or the client went away; "" if not.
  std::string error;
  bool client_gone = false;  // the client closed the connection before the response ended
};

// nginx's status for a request whose client closed the connection first: what the
// access line and /metrics record instead of the status already sent, so that an
// abandoned answer does not count as a success.
inline constexpr int kClientClosedRequest = 499;

// The record of the request this thread is answering.
AccessRecord& CurrentAccessRecord();

// Starts the record of a new request (before routing).
void BeginAccessRecord();

// Fills the record from a request's final update.
void RecordGeneration(const GenerationUpdate& final_update);

// Notes the message of the error the request was answered with (the first one wins).
void RecordError(std::string_view message);

// Notes that the client went away before the response was complete.
void RecordClientGone();

// The status to record for `res`: kClientClosedRequest once the client went away.
int RecordedStatus(const httplib::Response& res);

// Logs the access line of `req` and clears the thread's record.
void LogAccess(const httplib::Request& req, const httplib::Response& res);

}  // namespace qvl
