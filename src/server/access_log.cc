#include "server/access_log.h"

#include <vector>

#include "base/log.h"
#include "base/trim_space.h"
#include "server/openai_format.h"
#include "server/request_id.h"

namespace qvl {
namespace {

// Header values a client chose: logged (quoted by LogEvent when needed), never longer.
constexpr size_t kMaxLoggedHeader = 128;

std::string_view LoggedValue(std::string_view s) {
  return TrimSpace(s).substr(0, kMaxLoggedHeader);
}

}  // namespace

AccessRecord& CurrentAccessRecord() {
  thread_local AccessRecord record;
  return record;
}

void BeginAccessRecord() {
  AccessRecord& record = CurrentAccessRecord();
  record = AccessRecord();
  record.started = true;
  record.start = std::chrono::steady_clock::now();
}

void RecordGeneration(const GenerationUpdate& update) {
  AccessRecord& record = CurrentAccessRecord();
  record.generated = true;
  record.usage = update.usage;
  record.image_tokens = 0;
  for (const ImageGrid& image : update.timings.images) record.image_tokens += image.tokens;
  record.ttft_ms = update.timings.ttft_ms;
  if (!record.client_gone) record.error = CutShortReason(update);
}

void RecordError(std::string_view message) {
  AccessRecord& record = CurrentAccessRecord();
  if (record.error.empty()) record.error = message;
}

void RecordClientGone() {
  AccessRecord& record = CurrentAccessRecord();
  record.client_gone = true;
  record.error = "the client closed the connection before the answer was complete";
}

int RecordedStatus(const httplib::Response& res) {
  return CurrentAccessRecord().client_gone ? kClientClosedRequest : res.status;
}

void LogAccess(const httplib::Request& req, const httplib::Response& res) {
  AccessRecord& record = CurrentAccessRecord();
  const double total_ms = record.started ? std::chrono::duration<double, std::milli>(
                                               std::chrono::steady_clock::now() - record.start)
                                               .count()
                                         : 0.0;
  std::vector<LogField> fields;
  // Sane by construction (request_id.h): a client's id is only echoed when it is.
  const std::string request_id = res.get_header_value(kRequestIdHeader);
  if (!request_id.empty()) fields.emplace_back("request_id", request_id);
  fields.emplace_back("client", StrCat(req.remote_addr, ":", req.remote_port));
  // Behind a proxy the peer is the proxy: the client it names (the first address of
  // X-Forwarded-For), for the log only — a client can write anything there.
  const std::string forwarded = req.get_header_value("X-Forwarded-For");
  const std::string_view origin =
      LoggedValue(std::string_view(forwarded).substr(0, forwarded.find(',')));
  if (!origin.empty()) fields.emplace_back("forwarded_for", origin);
  const std::string session = req.get_header_value("X-Session-Id");
  if (!LoggedValue(session).empty()) fields.emplace_back("session", LoggedValue(session));
  fields.emplace_back("method", req.method);
  fields.emplace_back("path", req.path);
  fields.emplace_back("status", RecordedStatus(res));
  if (record.generated) {
    fields.emplace_back("prompt_tokens", record.usage.prompt_tokens);
    fields.emplace_back("image_tokens", record.image_tokens);
    fields.emplace_back("completion_tokens", record.usage.completion_tokens);
    fields.emplace_back("cached_tokens", record.usage.cached_tokens);
    fields.emplace_back("ttft_ms", record.ttft_ms);
  }
  fields.emplace_back("total_ms", total_ms);
  if (!record.error.empty()) fields.emplace_back("error", record.error);
  LogEvent(LogLevel::kInfo, "request", fields);
  record = AccessRecord();
}

}  // namespace qvl
