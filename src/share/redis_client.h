// A Redis client for caches that must never hold a request up: every command has a
// deadline (connect, write and read together), and any fault — refused, timed out,
// reset, an error reply — returns "no answer" and is counted, never thrown. After a
// fault new connections wait a short back-off, so a Redis that is down costs nothing.
// Thread-safe: each call borrows a connection from a small pool.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qvl {

// Where and how to reach Redis: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB].
struct RedisAddress {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string user;  // empty: AUTH with the password alone
  std::string password;
  int db = 0;
};

// Throws Error(kInvalidArgument) naming what is wrong (rediss:// is refused: Debian's
// hiredis has no TLS; run Redis on a private network or behind a TLS tunnel).
RedisAddress ParseRedisUrl(const std::string& url);

// Why a command got no answer; counted per kind for /metrics.
enum class RedisFault { kUnreachable, kTimeout, kErrorReply, kGarbage, kCount };
const char* RedisFaultName(RedisFault fault);

// A fault and what went wrong, for the log (RedisFaultLog).
struct RedisFaultInfo {
  RedisFault kind = RedisFault::kUnreachable;
  std::string detail;    // Redis's own message, or "no reply within 300 ms", …
  bool skipped = false;  // not tried: the client is in its back-off after a fault
  bool logged = false;   // already given to the log
};

class RedisFaultLog;

struct RedisFaultCounters {
  std::atomic<int64_t> counts[static_cast<int>(RedisFault::kCount)] = {};
  void Count(RedisFault fault) { ++counts[static_cast<int>(fault)]; }
  int64_t Get(RedisFault fault) const { return counts[static_cast<int>(fault)].load(); }
};

class RedisClient {
 public:
  // `timeout` bounds each command; `faults` (not owned, may be shared) counts failures.
  RedisClient(RedisAddress address, std::chrono::milliseconds timeout, RedisFaultCounters* faults);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // The value, std::nullopt when the key is absent or on any fault. `extra` lengthens
  // the client's timeout (a large value takes longer to arrive than a small one).
  std::optional<std::string> Get(std::string_view key,
                                 std::chrono::milliseconds extra = std::chrono::milliseconds(0));
  // As Get, telling the two apart: nullopt on any fault, else the value or (absent) an
  // empty optional.
  std::optional<std::optional<std::string>> Fetch(std::string_view key);
  std::chrono::milliseconds timeout() const { return timeout_; }
  // SET key value [EX ttl]; false on any fault. `timeout` overrides the client's (a big
  // value takes longer to send than a lookup).
  bool Set(std::string_view key, std::string_view value, int64_t ttl_seconds,
           std::chrono::milliseconds timeout);
  // DEL key within the client's timeout: whether a key was removed, nullopt on any fault.
  std::optional<bool> Del(std::string_view key);

  RedisFaultCounters& faults() { return *faults_; }

 private:
  struct Connection;
  struct Reply;
  std::optional<std::optional<std::string>> GetWithin(std::string_view key,
                                                      std::chrono::milliseconds timeout);
  // Runs one command within `timeout`; null on a fault (counted).
  std::optional<Reply> Command(const std::vector<std::string_view>& args,
                               std::chrono::milliseconds timeout);
  // Counts a fault of `args` for /metrics and says it in the log (rate-limited).
  void CountFault(const std::vector<std::string_view>& args, std::chrono::milliseconds timeout,
                  RedisFaultInfo* fault);
  // A kept connection (*reused = true) or a new one; null on a fault (logged) or during a
  // back-off.
  Connection* Borrow(std::chrono::steady_clock::time_point deadline, RedisFaultInfo* fault,
                     bool* reused);
  void Return(Connection* c);
  void DropIdle();

  RedisAddress address_;
  std::chrono::milliseconds timeout_;
  RedisFaultCounters* faults_;
  std::unique_ptr<RedisFaultLog> log_;
  std::mutex mu_;
  std::vector<Connection*> idle_;
  std::chrono::steady_clock::time_point retry_after_{};
};

}  // namespace qvl
