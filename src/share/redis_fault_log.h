// Says in the log why Redis gave no answer, without flooding it: the first fault of each
// kind (and, for error replies, of each of Redis's error codes: NOAUTH, NOPERM, OOM, …)
// is logged at once with Redis's own message (or what went wrong: "no reply within
// 300 ms") and what qvl does about it; later ones at most once a minute per kind, with
// the count since the last line. /metrics counts every fault
// (qvl_shared_cache_faults_total); this is what tells an operator why.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "share/redis_client.h"

namespace qvl {

class RedisFaultLog {
 public:
  using Clock = std::chrono::steady_clock;
  // `where` names the server in each line (host:port; never the URL, which may hold a
  // password).
  explicit RedisFaultLog(std::string where,
                         std::chrono::seconds interval = std::chrono::seconds(60));

  // One fault of `command` (GET, SET, AUTH, SELECT, connect): `detail` is Redis's error
  // message or what went wrong, `action` what qvl does about it.
  void Record(RedisFault fault, std::string_view command, std::string_view detail,
              std::string_view action, Clock::time_point now = Clock::now());
  // Logs the first successful connection (once): `what` says to which user and database.
  void Connected(std::string_view what);

  // The line's key: the fault's name, and an error reply's code ("error_reply NOPERM").
  static std::string KindOf(RedisFault fault, std::string_view detail);

 private:
  struct State {
    Clock::time_point last_line;
    int64_t since_last_line = 0;
  };
  std::string where_;
  std::chrono::seconds interval_;
  std::mutex mu_;
  std::map<std::string, State> states_;  // one per kind seen
  bool connected_ = false;
};

}  // namespace qvl
