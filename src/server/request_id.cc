#include "server/request_id.h"

#include "server/openai_format.h"

namespace qvl {

bool IsSaneRequestId(std::string_view id) {
  if (id.empty() || id.size() > kMaxClientRequestIdLength) return false;
  for (const char c : id) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

std::string NewRequestId() { return NewCompletionId("req_"); }

void SetRequestId(const httplib::Request& req, httplib::Response& res) {
  if (res.has_header(kRequestIdHeader)) return;
  const std::string sent = req.get_header_value(kRequestIdHeader);
  res.set_header(kRequestIdHeader, IsSaneRequestId(sent) ? sent : NewRequestId());
}

}  // namespace qvl
