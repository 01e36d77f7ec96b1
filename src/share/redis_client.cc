#include "share/redis_client.h"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>

#include "base/error.h"
#include "base/log.h"
#include "share/redis_fault_log.h"

namespace qvl {
namespace {

using Clock = std::chrono::steady_clock;
using Fault = RedisFaultInfo;

// After a connection fails, new ones wait this long: a Redis that is down or
// black-holed then costs requests nothing instead of a timeout each.
constexpr std::chrono::milliseconds kBackoff{1000};
// Idle connections kept for reuse; more are closed when returned.
constexpr size_t kMaxIdle = 8;
constexpr size_t kReadChunk = size_t{1} << 20;
constexpr size_t kReplyHeadRead = 64 * 1024;  // a bulk value's first bytes come with it
constexpr size_t kMaxReplyHead = 4096;        // a reply line longer than this is garbage

int RemainingMs(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Waits for `events` on the socket until `deadline`; false on timeout or error.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const int ms = RemainingMs(deadline);
    if (ms <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = poll(&p, 1, ms);
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

// The URL as errors may show it: a password becomes "***" (errors reach logs and
// terminals).
std::string WithoutPassword(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t at = url.rfind('@');
  if (scheme == std::string::npos || at == std::string::npos || at < scheme) return url;
  const size_t start = scheme + 3;
  const size_t colon = url.find(':', start);
  const size_t password = colon != std::string::npos && colon < at ? colon + 1 : start;
  return url.substr(0, password) + "***" + url.substr(at);
}

int ParseInt(std::string_view text, const std::string& url, const char* what) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
    Fail(ErrorCode::kInvalidArgument, "--redis ", WithoutPassword(url), ": the ", what, " '", text,
         "' is not a number");
  }
  return value;
}

// RFC 3986 percent-decoding of the URL's user or password ("p%40ss" is "p@ss"), as
// redis-cli and redis-py read them. The error does not repeat the URL: it holds the
// password.
std::string PercentDecode(std::string_view text, const char* what) {
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size() || hex(text[i + 1]) < 0 || hex(text[i + 2]) < 0) {
      Fail(ErrorCode::kInvalidArgument, "--redis: the URL's ", what,
           " holds a '%' not followed by two hex digits; write a '%' as %25 (user and "
           "password are percent-encoded: '@' is %40, ':' %3A, '/' %2F)");
    }
    out.push_back(static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2])));
    i += 2;
  }
  return out;
}

}  // namespace

RedisAddress ParseRedisUrl(const std::string& url) {
  constexpr std::string_view kScheme = "redis://";
  if (url.rfind("rediss://", 0) == 0) {
    Fail(ErrorCode::kInvalidArgument, "--redis ", WithoutPassword(url),
         ": TLS (rediss://) is not supported by this build's hiredis; use redis:// on a "
         "private network");
  }
  if (url.rfind(kScheme, 0) != 0) {
    Fail(ErrorCode::kInvalidArgument, "--redis ", WithoutPassword(url),
         ": expected redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]");
  }
  RedisAddress a;
  std::string_view rest = std::string_view(url).substr(kScheme.size());
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) {
    const std::string_view credentials = rest.substr(0, at);
    rest = rest.substr(at + 1);
    const size_t colon = credentials.find(':');
    if (colon == std::string_view::npos) {
      a.password = PercentDecode(credentials, "password");
    } else {
      a.user = PercentDecode(credentials.substr(0, colon), "user");
      a.password = PercentDecode(credentials.substr(colon + 1), "password");
    }
  }
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    const std::string_view db = rest.substr(slash + 1);
    if (!db.empty()) a.db = ParseInt(db, url, "database");
    rest = rest.substr(0, slash);
  }
  if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    a.port = ParseInt(rest.substr(colon + 1), url, "port");
    rest = rest.substr(0, colon);
  }
  if (rest.empty())
    Fail(ErrorCode::kInvalidArgument, "--redis ", WithoutPassword(url), ": no host");
  a.host = std::string(rest);
  return a;
}

const char* RedisFaultName(RedisFault fault) {
  switch (fault) {
    case RedisFault::kUnreachable:
      return "unreachable";
    case RedisFault::kTimeout:
      return "timeout";
    case RedisFault::kErrorReply:
      return "error_reply";
    case RedisFault::kGarbage:
      return "garbage";
    case RedisFault::kCount:
      break;
  }
  return "";
}

struct RedisClient::Connection {
  redisContext* ctx = nullptr;
  ~Connection() {
    if (ctx) redisFree(ctx);
  }
};

struct RedisClient::Reply {
  int type = 0;
  std::string str;
  long long integer = 0;
};

namespace {

// Appends what the socket has (at most `max` bytes) to `buf` before `deadline`.
bool ReadSome(int fd, Clock::time_point deadline, std::string* buf, size_t max, Fault* fault) {
  for (;;) {
    if (!WaitFor(fd, POLLIN, deadline)) {
      fault->kind = RedisFault::kTimeout;
      fault->detail.clear();  // CountFault names the timeout
      return false;
    }
    const size_t old = buf->size();
    buf->resize(old + max);
    const ssize_t n = read(fd, buf->data() + old, max);
    buf->resize(old + (n > 0 ? static_cast<size_t>(n) : 0));
    if (n > 0) return true;
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    fault->kind = RedisFault::kUnreachable;  // closed or reset
    fault->detail = n == 0 ? "Redis closed the connection" : std::strerror(errno);
    return false;
  }
}

// One reply of the commands this client sends (GET, SET, DEL, AUTH, SELECT): +status,
// -error, :integer, $bulk or $-1. Read here rather than by hiredis' reader, so that a
// bulk value of many MiB arrives straight into its string: one copy instead of three.
bool ReadReply(int fd, Clock::time_point deadline, int* type, std::string* str, long long* integer,
               Fault* fault) {
  std::string head;
  size_t eol;
  while ((eol = head.find("\r\n")) == std::string::npos) {
    if (head.size() > kMaxReplyHead) {
      fault->kind = RedisFault::kGarbage;
      fault->detail = StrCat("a reply line of over ", kMaxReplyHead, " bytes");
      return false;
    }
    if (!ReadSome(fd, deadline, &head, kReplyHeadRead, fault)) return false;
  }
  const std::string_view line(head.data() + 1, eol - 1);
  const std::string_view rest = std::string_view(head).substr(eol + 2);
  auto number = [&](long long* v) {
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), *v);
    return ec == std::errc() && end == line.data() + line.size();
  };
  fault->kind = RedisFault::kGarbage;
  fault->detail = "a reply that is not the Redis protocol";
  switch (head[0]) {
    case '+':
    case '-':
      *type = head[0] == '+' ? REDIS_REPLY_STATUS : REDIS_REPLY_ERROR;
      str->assign(line);
      return rest.empty();
    case ':':
      *type = REDIS_REPLY_INTEGER;
      return number(integer) && rest.empty();
    case '$': {
      long long n = 0;
      if (!number(&n) || n < -1) return false;
      if (n == -1) {
        *type = REDIS_REPLY_NIL;
        return rest.empty();
      }
      const size_t want = static_cast<size_t>(n) + 2;
      if (rest.size() > want) return false;
      str->reserve(want);
      str->assign(rest);
      while (str->size() < want) {
        if (!ReadSome(fd, deadline, str, std::min(want - str->size(), kReadChunk), fault))
          return false;
      }
      if (str->compare(static_cast<size_t>(n), 2, "\r\n") != 0) return false;
      str->resize(static_cast<size_t>(n));
      *type = REDIS_REPLY_STRING;
      return true;
    }
    default:
      return false;  // not the Redis protocol
  }
}

// Sends one command and reads its reply before `deadline`.
bool Exchange(redisContext* ctx, const std::vector<std::string_view>& args,
              Clock::time_point deadline, int* type, std::string* str, long long* integer,
              Fault* fault) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (std::string_view a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  if (redisAppendCommandArgv(ctx, static_cast<int>(argv.size()), argv.data(), lens.data()) !=
      REDIS_OK) {
    fault->kind = RedisFault::kUnreachable;
    fault->detail = ctx->errstr;
    return false;
  }
  for (int done = 0; !done;) {
    if (redisBufferWrite(ctx, &done) != REDIS_OK) {
      fault->kind = RedisFault::kUnreachable;
      fault->detail = ctx->errstr;
      return false;
    }
    if (!done && !WaitFor(ctx->fd, POLLOUT, deadline)) {
      fault->kind = RedisFault::kTimeout;
      return false;
    }
  }
  if (!ReadReply(ctx->fd, deadline, type, str, integer, fault)) return false;
  if (*type == REDIS_REPLY_ERROR) {
    fault->kind = RedisFault::kErrorReply;
    fault->detail = *str;  // Redis's own message: "NOPERM this user has no permissions …"
    return false;
  }
  return true;
}

}  // namespace

RedisClient::RedisClient(RedisAddress address, std::chrono::milliseconds timeout,
                         RedisFaultCounters* faults)
    : address_(std::move(address)),
      timeout_(timeout),
      faults_(faults),
      log_(std::make_unique<RedisFaultLog>(StrCat(address_.host, ":", address_.port))) {}

RedisClient::~RedisClient() {
  for (Connection* c : idle_) delete c;
}

RedisClient::Connection* RedisClient::Borrow(Clock::time_point deadline, Fault* fault,
                                             bool* reused) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // During a back-off idle connections wait too: they lead to the same slow Redis.
    if (Clock::now() < retry_after_) {
      fault->kind = RedisFault::kUnreachable;
      fault->skipped = true;
      return nullptr;
    }
    if (!idle_.empty()) {
      Connection* c = idle_.back();
      idle_.pop_back();
      *reused = true;
      return c;
    }
  }
  const int connect_ms = RemainingMs(deadline);
  auto c = std::make_unique<Connection>();
  c->ctx = redisConnectNonBlock(address_.host.c_str(), address_.port);
  bool ok = c->ctx != nullptr && c->ctx->err == 0;
  fault->kind = RedisFault::kUnreachable;
  fault->detail = c->ctx == nullptr ? "out of memory" : c->ctx->errstr;
  std::string command = "connect";
  if (ok) {
    if (!WaitFor(c->ctx->fd, POLLOUT, deadline)) {
      ok = false;
      fault->kind = RedisFault::kTimeout;
      fault->detail = StrCat("no connection within ", connect_ms, " ms");
    } else {
      int error = 0;
      socklen_t len = sizeof(error);
      ok = getsockopt(c->ctx->fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0;
      if (!ok) fault->detail = std::strerror(error != 0 ? error : errno);
    }
  }
  int type = 0;
  std::string str;
  long long integer = 0;
  if (ok && !address_.password.empty()) {
    std::vector<std::string_view> auth = {"AUTH"};
    if (!address_.user.empty()) auth.push_back(address_.user);
    auth.push_back(address_.password);
    command = "AUTH";
    ok = Exchange(c->ctx, auth, deadline, &type, &str, &integer, fault);
  }
  const std::string db = std::to_string(address_.db);
  if (ok && address_.db != 0) {
    command = StrCat("SELECT ", db);
    ok = Exchange(c->ctx, {"SELECT", db}, deadline, &type, &str, &integer, fault);
  }
  if (!ok) {
    if (fault->kind == RedisFault::kTimeout && fault->detail.empty())
      fault->detail = StrCat("no reply within ", connect_ms, " ms");
    log_->Record(fault->kind, command, fault->detail,
                 StrCat("caching locally only, connecting again in ", kBackoff.count(), " ms"));
    std::lock_guard<std::mutex> lock(mu_);
    retry_after_ = Clock::now() + kBackoff;
    fault->logged = true;
    return nullptr;
  }
  log_->Connected(StrCat(address_.user.empty() ? "" : StrCat(" as ", address_.user),
                         address_.password.empty() ? "" : " (authenticated)", ", database ", db));
  return c.release();
}

void RedisClient::Return(Connection* c) {
  std::lock_guard<std::mutex> lock(mu_);
  if (idle_.size() < kMaxIdle) {
    idle_.push_back(c);
  } else {
    delete c;
  }
}

void RedisClient::CountFault(const std::vector<std::string_view>& args,
                             std::chrono::milliseconds timeout, Fault* fault) {
  faults_->Count(fault->kind);
  // Lookups skipped during a back-off are the logged fault's consequence; Borrow logged
  // its own.
  if (fault->skipped || fault->logged) return;
  if (fault->kind == RedisFault::kTimeout && fault->detail.empty())
    fault->detail = StrCat("no reply within ", timeout.count(), " ms");
  const std::string_view command = args.empty() ? std::string_view() : args[0];
  std::string action = command == "SET"   ? "the value is not stored"
                       : command == "GET" ? "going on without the shared cache (a miss)"
                                          : "going on without the shared cache";
  if (fault->kind == RedisFault::kTimeout || fault->kind == RedisFault::kUnreachable)
    action += StrCat(", skipping Redis for ", kBackoff.count(), " ms");
  log_->Record(fault->kind, command, fault->detail, action);
}

std::optional<RedisClient::Reply> RedisClient::Command(const std::vector<std::string_view>& args,
                                                       std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  for (int attempt = 0;; ++attempt) {
    Fault fault;
    bool reused = false;
    Connection* c = Borrow(deadline, &fault, &reused);
    if (c == nullptr) {
      CountFault(args, timeout, &fault);
      return std::nullopt;
    }
    Reply reply;
    if (Exchange(c->ctx, args, deadline, &reply.type, &reply.str, &reply.integer, &fault)) {
      Return(c);
      return reply;
    }
    // An error reply leaves the connection in step; anything else may not.
    if (fault.kind == RedisFault::kErrorReply) {
      CountFault(args, timeout, &fault);
      Return(c);
      return std::nullopt;
    }
    delete c;
    // A kept connection that was closed under it (Redis restarted): the other kept ones
    // are as stale. The commands are idempotent: once more on a new connection.
    if (reused && fault.kind == RedisFault::kUnreachable && attempt == 0) {
      DropIdle();
      continue;
    }
    if (fault.kind != RedisFault::kGarbage) {
      std::lock_guard<std::mutex> lock(mu_);
      retry_after_ = Clock::now() + kBackoff;
    }
    CountFault(args, timeout, &fault);
    return std::nullopt;
  }
}

void RedisClient::DropIdle() {
  std::vector<Connection*> idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    idle.swap(idle_);
  }
  for (Connection* c : idle) delete c;
}

std::optional<std::optional<std::string>> RedisClient::GetWithin(
    std::string_view key, std::chrono::milliseconds timeout) {
  std::optional<Reply> reply = Command({"GET", key}, timeout);
  if (!reply) return std::nullopt;
  if (reply->type == REDIS_REPLY_NIL) return std::optional<std::string>();
  if (reply->type != REDIS_REPLY_STRING) {
    Fault fault{RedisFault::kGarbage, "a reply that is not a string or nil", false, false};
    CountFault({"GET"}, timeout, &fault);
    return std::nullopt;
  }
  return std::optional<std::string>(std::move(reply->str));
}

std::optional<std::string> RedisClient::Get(std::string_view key, std::chrono::milliseconds extra) {
  std::optional<std::optional<std::string>> value = GetWithin(key, timeout_ + extra);
  return value ? std::move(*value) : std::nullopt;
}

std::optional<std::optional<std::string>> RedisClient::Fetch(std::string_view key) {
  return GetWithin(key, timeout_);
}

bool RedisClient::Set(std::string_view key, std::string_view value, int64_t ttl_seconds,
                      std::chrono::milliseconds timeout) {
  std::vector<std::string_view> args = {"SET", key, value};
  const std::string ttl = std::to_string(ttl_seconds);
  if (ttl_seconds > 0) {
    args.push_back("EX");
    args.push_back(ttl);
  }
  return Command(args, timeout).has_value();
}

std::optional<bool> RedisClient::Del(std::string_view key) {
  std::optional<Reply> reply = Command({"DEL", key}, timeout_);
  if (!reply) return std::nullopt;
  if (reply->type != REDIS_REPLY_INTEGER) {
    Fault fault{RedisFault::kGarbage, "a reply that is not an integer", false, false};
    CountFault({"DEL"}, timeout_, &fault);
    return std::nullopt;
  }
  return reply->integer > 0;
}

}  // namespace qvl
