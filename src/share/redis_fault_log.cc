#include "share/redis_fault_log.h"

#include <cctype>

#include "base/error.h"
#include "base/log.h"

namespace qvl {
namespace {

// At most this many error codes get lines of their own; others share "error_reply".
constexpr size_t kMaxKinds = 32;

// What an operator can do about the error replies a misconfiguration gives.
std::string_view Hint(std::string_view kind) {
  if (kind == "error_reply NOAUTH")
    return " (Redis wants a password: give it in --redis redis://:PASSWORD@HOST or "
           "--redis-password-file)";
  if (kind == "error_reply WRONGPASS")
    return " (check the user and password; in the URL, percent-encode '@', ':', '/' and '%')";
  if (kind == "error_reply NOPERM")
    return " (the ACL user needs the keys of --redis-prefix, e.g. ~qvl:*, and GET, SET, DEL)";
  if (kind == "error_reply OOM")
    return " (Redis is full and may not evict: set maxmemory-policy allkeys-lru)";
  return "";
}

}  // namespace

RedisFaultLog::RedisFaultLog(std::string where, std::chrono::seconds interval)
    : where_(std::move(where)), interval_(interval) {}

std::string RedisFaultLog::KindOf(RedisFault fault, std::string_view detail) {
  std::string kind = RedisFaultName(fault);
  if (fault != RedisFault::kErrorReply) return kind;
  // Redis's error replies start with a code in capitals: "NOPERM this user has …".
  size_t n = 0;
  while (n < detail.size() && n < 24 && std::isupper(static_cast<unsigned char>(detail[n]))) ++n;
  if (n > 0 && (n == detail.size() || detail[n] == ' ')) kind += StrCat(" ", detail.substr(0, n));
  return kind;
}

void RedisFaultLog::Record(RedisFault fault, std::string_view command, std::string_view detail,
                           std::string_view action, Clock::time_point now) {
  std::string kind = KindOf(fault, detail);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find(kind);
  if (it == states_.end() && states_.size() >= kMaxKinds) {
    kind = RedisFaultName(fault);
    it = states_.find(kind);
  }
  if (it == states_.end()) {
    states_[kind].last_line = now;
    LogWarn("redis ", where_, ": ", kind, " to ", command, ": ", detail, Hint(kind), "; ", action,
            " (logged again at most once a minute)");
    return;
  }
  State& s = it->second;
  ++s.since_last_line;
  if (now - s.last_line < interval_) return;
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - s.last_line).count();
  LogWarn("redis ", where_, ": ", s.since_last_line, " more ", kind, " faults in the last ",
          seconds, " s; the latest, to ", command, ": ", detail, "; ", action);
  s.since_last_line = 0;
  s.last_line = now;
}

void RedisFaultLog::Connected(std::string_view what) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (connected_) return;
    connected_ = true;
  }
  LogInfo("redis ", where_, ": connected", what);
}

}  // namespace qvl
