#include "server/gated_http_server.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>

#include "base/error.h"
#include "base/log.h"
#include "server/api_error.h"
#include "server/request_id.h"
#include "server/routes.h"

namespace qvl {
namespace {

// httplib's accept loop runs each connection through this queue: the task (our
// process_and_close_socket) only hands the socket to the gate, so it runs inline.
class InlineQueue : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

int PollOne(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  int n;
  do {
    n = ::poll(&p, 1, timeout_ms);
  } while (n < 0 && errno == EINTR);
  return n;
}

// The target of the request line that starts `received` ("/v1/chat/completions"), "" until
// that line has come whole: it says in which API's shape a refusal is written.
std::string_view RequestPath(std::string_view received) {
  const std::string_view line = received.substr(0, received.find("\r\n"));
  if (line.size() == received.size()) return "";
  const size_t start = line.find(' ');
  if (start == std::string_view::npos) return "";
  const std::string_view target = line.substr(start + 1);
  return target.substr(0, target.find(' '));
}

void AddressOf(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  const int rc = peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length)
                      : ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ip.clear();
  port = 0;
  if (rc != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
    port = ntohs(v4->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

// The connection as httplib reads and writes it during one request: first the bytes the
// gate already read, then the socket, each read and write bounded by its timeout.
class ConnectionStream : public httplib::Stream {
 public:
  ConnectionStream(int fd, std::string buffered, int read_timeout_ms, int write_timeout_ms)
      : fd_(fd),
        buffer_(std::move(buffered)),
        read_timeout_ms_(read_timeout_ms),
        write_timeout_ms_(write_timeout_ms) {}

  bool is_readable() const override {
    return pos_ < buffer_.size() || PollOne(fd_, POLLIN, read_timeout_ms_) > 0;
  }
  // Also false once the client has hung up (a content provider asks between chunks): an
  // answer that writes nothing until it is done would otherwise run to its end for no
  // one. A client that shuts only its sending side counts as gone, as it does for
  // llama-server; HTTP clients keep both sides open while they wait.
  bool is_writable() const override { return CanWrite() && !PeerClosed(); }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == buffer_.size()) {
      if (PollOne(fd_, POLLIN, read_timeout_ms_) <= 0) return -1;
      buffer_.resize(kChunk);
      pos_ = 0;
      ssize_t n;
      do {
        n = ::recv(fd_, buffer_.data(), kChunk, 0);
      } while (n < 0 && errno == EINTR);
      buffer_.resize(n > 0 ? static_cast<size_t>(n) : 0);
      if (n <= 0) return n;
    }
    const size_t n = std::min(size, buffer_.size() - pos_);
    std::memcpy(ptr, buffer_.data() + pos_, n);
    pos_ += n;
    consumed_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!CanWrite()) return -1;
    ssize_t n;
    do {
      n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    AddressOf(fd_, true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    AddressOf(fd_, false, ip, port);
  }
  socket_t socket() const override { return fd_; }

  size_t consumed() const { return consumed_; }  // bytes httplib has read
  std::string TakeUnread() { return buffer_.substr(pos_); }

 private:
  bool CanWrite() const { return PollOne(fd_, POLLOUT, write_timeout_ms_) > 0; }
  // The peer has sent its FIN (or the connection failed); unread input does not count.
  bool PeerClosed() const {
    pollfd p{fd_, POLLRDHUP, 0};
    return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  }

  static constexpr size_t kChunk = 16 << 10;
  int fd_;
  std::string buffer_;
  size_t pos_ = 0;
  size_t consumed_ = 0;
  int read_timeout_ms_;
  int write_timeout_ms_;
};

// The end of the head in `text` (after its blank line), searching from `from`; 0 if
// there is none yet. Bare LF line ends are accepted, as httplib accepts them.
size_t HeadEnd(const std::string& text, size_t from) {
  for (size_t i = from; i < text.size(); ++i) {
    if (text[i] != '\n') continue;
    if (i >= 1 && text[i - 1] == '\n') return i + 1;
    if (i >= 3 && text[i - 1] == '\r' && text[i - 2] == '\n' && text[i - 3] == '\r') return i + 1;
  }
  return 0;
}

// The value of the first header `name` ("\ncontent-length:", lower case, with the line's
// start and the colon) at or after byte `from`, blanks trimmed; nullopt when the head has
// none.
std::optional<std::string_view> HeaderValue(const std::string& text, size_t head_bytes,
                                            std::string_view name, size_t from = 0) {
  for (size_t i = from; i + name.size() <= head_bytes; ++i) {
    size_t k = 0;
    while (k < name.size() && std::tolower(static_cast<unsigned char>(text[i + k])) == name[k]) {
      ++k;
    }
    if (k < name.size()) continue;
    size_t begin = i + name.size();
    size_t end = begin;
    while (end < head_bytes && text[end] != '\r' && text[end] != '\n') ++end;
    while (begin < end && (text[begin] == ' ' || text[begin] == '\t')) ++begin;
    while (end > begin && (text[end - 1] == ' ' || text[end - 1] == '\t')) --end;
    return std::string_view(text).substr(begin, end - begin);
  }
  return std::nullopt;
}

constexpr std::string_view kContentLength = "\ncontent-length:";
constexpr std::string_view kRequestIdName = "\nx-request-id:";

// The number a Content-Length value starts with, saturated at 2^60.
uint64_t LengthValue(std::string_view digits) {
  uint64_t n = 0;
  for (size_t p = 0;
       p < digits.size() && digits[p] >= '0' && digits[p] <= '9' && n < (uint64_t{1} << 60); ++p) {
    n = n * 10 + static_cast<uint64_t>(digits[p] - '0');
  }
  return n;
}

// The Content-Length the head announces, 0 when there is none.
uint64_t ContentLength(const std::string& text, size_t head_bytes) {
  return LengthValue(HeaderValue(text, head_bytes, kContentLength).value_or(""));
}

// Reads and discards what the peer sent, at most 1 MiB per call so that one fast sender
// cannot hold the gate; false once the peer has closed (or failed).
bool Drain(int fd) {
  char chunk[16 << 10];
  for (int i = 0; i < 64; ++i) {
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
  return true;
}

}  // namespace

GatedHttpServer::GatedHttpServer(GateLimits limits) : limits_(limits) {
  new_task_queue = [] { return new InlineQueue(); };
  // Instead of httplib's SO_REUSEPORT, which would let a second server share the port.
  set_socket_options([this](socket_t fd) {
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_fd_ = fd;
  });
  // A body over the limit announced with "Expect: 100-continue" (curl's default for big
  // uploads) is refused before the client is told to send it: httplib then writes the
  // 413 as any error response, through the error handler (the API's JSON error) and
  // the logger, instead of an empty one.
  set_expect_100_continue_handler([this](const httplib::Request& req, httplib::Response& res) {
    const std::string length = req.get_header_value("Content-Length");
    if (!length.empty() && LengthValue(length) > payload_max_length_) {
      res.status = 413;
      return 413;
    }
    return 100;
  });
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) Fail(ErrorCode::kIo, "cannot create an eventfd: ", std::strerror(errno));
  gate_ = std::thread([this] { GateLoop(); });
}

GatedHttpServer::~GatedHttpServer() {
  Shutdown();
  ::close(wake_fd_);
}

void GatedHttpServer::SetWorkerThreads(int threads) {
  if (workers_) workers_->shutdown();
  workers_ = std::make_unique<httplib::ThreadPool>(static_cast<size_t>(std::max(threads, 1)));
}

void GatedHttpServer::SetRequestSetup(std::function<void(httplib::Request&)> setup) {
  setup_request_ = std::move(setup);
}

void GatedHttpServer::WidenBacklog() {
  if (listen_fd_ >= 0) ::listen(listen_fd_, SOMAXCONN);
}

void GatedHttpServer::Shutdown() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t ignored = ::write(wake_fd_, &one, sizeof(one));
  if (gate_.joinable()) gate_.join();
  stop();
  if (workers_) workers_->shutdown();
}

bool GatedHttpServer::process_and_close_socket(socket_t sock) {
  Connection c;
  c.fd = sock;
  c.deadline = Clock::now() + std::chrono::milliseconds(limits_.head_timeout_ms);
  Wait(std::move(c));
  return true;
}

void GatedHttpServer::Wait(Connection c) {
  c.head_bytes = HeadEnd(c.received, 0);
  if (c.head_bytes > 0) return Dispatch(std::move(c));
  Enqueue(std::move(c));
}

void GatedHttpServer::Enqueue(Connection c) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return Close(c.fd);
    incoming_.push_back(std::move(c));
  }
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t ignored = ::write(wake_fd_, &one, sizeof(one));
}

GatedHttpServer::ReadResult GatedHttpServer::ReadHead(Connection& c) const {
  char chunk[16 << 10];
  while (c.received.size() <= limits_.max_head_bytes) {
    const size_t room = limits_.max_head_bytes + 1 - c.received.size();
    const ssize_t n = ::recv(c.fd, chunk, std::min(room, sizeof(chunk)), MSG_DONTWAIT);
    if (n == 0) return ReadResult::kClosed;
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK ? ReadResult::kPending : ReadResult::kClosed;
    }
    const size_t old_size = c.received.size();
    c.received.append(chunk, static_cast<size_t>(n));
    c.head_bytes = HeadEnd(c.received, old_size >= 3 ? old_size - 3 : 0);
    if (c.head_bytes > 0) return ReadResult::kComplete;
  }
  return ReadResult::kTooLarge;
}

void GatedHttpServer::GateLoop() {
  std::vector<Connection> waiting;
  std::vector<pollfd> polled;
  while (true) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) break;
      for (Connection& c : incoming_) waiting.push_back(std::move(c));
      incoming_.clear();
    }
    if (waiting.size() > limits_.max_waiting) {
      // Too many half-open connections: the ones waiting longest make room.
      std::sort(waiting.begin(), waiting.end(),
                [](const Connection& a, const Connection& b) { return a.deadline > b.deadline; });
      for (size_t i = limits_.max_waiting; i < waiting.size(); ++i) Close(waiting[i].fd);
      waiting.resize(limits_.max_waiting);
    }
    polled.assign(1, pollfd{wake_fd_, POLLIN, 0});
    Clock::time_point next = Clock::time_point::max();
    for (const Connection& c : waiting) {
      polled.push_back(pollfd{c.fd, POLLIN, 0});
      next = std::min(next, c.deadline);
    }
    int timeout_ms = -1;
    if (next != Clock::time_point::max()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now());
      timeout_ms = static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, 60000));
    }
    if (::poll(polled.data(), polled.size(), timeout_ms) < 0 && errno != EINTR) break;
    if (polled[0].revents != 0) {
      uint64_t count;
      [[maybe_unused]] const ssize_t ignored = ::read(wake_fd_, &count, sizeof(count));
    }
    const Clock::time_point now = Clock::now();
    std::vector<Connection> still_waiting;
    for (size_t i = 0; i < waiting.size(); ++i) {
      Connection& c = waiting[i];
      if (c.draining) {
        if ((polled[i + 1].revents != 0 && !Drain(c.fd)) || now >= c.deadline) {
          Close(c.fd);
        } else {
          still_waiting.push_back(std::move(c));
        }
        continue;
      }
      ReadResult result = ReadResult::kPending;
      if (polled[i + 1].revents != 0) result = ReadHead(c);
      switch (result) {
        case ReadResult::kComplete:
          Dispatch(std::move(c));
          break;
        case ReadResult::kClosed:
          Close(c.fd);
          break;
        case ReadResult::kTooLarge:
          Refuse(
              c, "431 Request Header Fields Too Large",
              StrCat("the request line and headers are over ", limits_.max_head_bytes, " bytes"));
          break;
        case ReadResult::kPending:
          if (now < c.deadline) {
            still_waiting.push_back(std::move(c));
          } else if (c.received.empty()) {
            Close(c.fd);  // an idle keep-alive connection
          } else {
            Refuse(c, "408 Request Timeout",
                   StrCat("the request line and headers did not arrive within ",
                          limits_.head_timeout_ms, " ms"));
          }
          break;
      }
    }
    waiting.swap(still_waiting);
  }
  for (const Connection& c : waiting) Close(c.fd);
  const std::lock_guard<std::mutex> lock(mutex_);
  for (const Connection& c : incoming_) Close(c.fd);
  incoming_.clear();
}

void GatedHttpServer::Dispatch(Connection c) {
  if (!workers_) return Close(c.fd);  // SetWorkerThreads was never called
  workers_->enqueue([this, c]() mutable { Serve(std::move(c)); });
}

std::string_view GatedHttpServer::CheckHead(Connection& c) const {
  const std::optional<std::string_view> length =
      HeaderValue(c.received, c.head_bytes, kContentLength);
  if (length) {
    // httplib would read "-5" as 2^64 - 5 and wait for that much body.
    if (length->empty() || length->find_first_not_of("0123456789") != std::string_view::npos) {
      return "Content-Length is not a number of bytes";
    }
    // A proxy that reads the other one would take the rest of this body for a request of
    // its own (request smuggling; RFC 9112 section 6.3). Repeats of one value are one.
    std::string_view seen = *length;
    while (const auto other = HeaderValue(c.received, c.head_bytes, kContentLength,
                                          static_cast<size_t>(seen.data() - c.received.data()))) {
      if (*other != *length) return "Content-Length is given twice with different values";
      seen = *other;
    }
    // One over the limit with "Expect: 100-continue" is refused by the expect handler
    // (see the constructor), before any 100 Continue.
    return {};
  }
  // HTTP/1.1: a request without Content-Length or Transfer-Encoding has no body. httplib
  // would read one until the client closed; it gets "Content-Length: 0" instead.
  const std::string_view head = std::string_view(c.received).substr(0, c.head_bytes);
  const bool has_body_method =
      head.rfind("POST ", 0) == 0 || head.rfind("PUT ", 0) == 0 || head.rfind("PATCH ", 0) == 0;
  if (has_body_method && !HeaderValue(c.received, c.head_bytes, "\ntransfer-encoding:")) {
    const size_t blank =
        c.head_bytes >= 4 && c.received.compare(c.head_bytes - 4, 4, "\r\n\r\n") == 0
            ? c.head_bytes - 2
            : c.head_bytes - 1;
    static constexpr std::string_view kEmpty = "Content-Length: 0\r\n";
    c.received.insert(blank, kEmpty);
    c.head_bytes += kEmpty.size();
  }
  return {};
}

void GatedHttpServer::Serve(Connection c) {
  if (const std::string_view refused = CheckHead(c); !refused.empty()) {
    return Refuse(c, "400 Bad Request", std::string(refused));
  }
  const uint64_t body = ContentLength(c.received, c.head_bytes);
  const uint64_t request_bytes = c.head_bytes + body;
  const int read_ms = static_cast<int>(read_timeout_sec_ * 1000 + read_timeout_usec_ / 1000);
  const int write_ms = static_cast<int>(write_timeout_sec_ * 1000 + write_timeout_usec_ / 1000);
  ConnectionStream stream(c.fd, std::move(c.received), read_ms, write_ms);
  const bool last = ++c.served >= limits_.max_requests_per_connection;
  bool client_closes = false;
  const bool ok = process_request(stream, last, client_closes, setup_request_);
  // A handler that answered without reading the body (a 401, a 413) leaves it unread:
  // the connection cannot carry another request.
  if (stream.consumed() < request_bytes) return Linger(c.fd);
  if (!ok || last || client_closes) return Close(c.fd);
  c.received = stream.TakeUnread();
  c.head_bytes = 0;
  c.deadline = Clock::now() + std::chrono::milliseconds(limits_.head_timeout_ms);
  Wait(std::move(c));
}

void GatedHttpServer::Refuse(const Connection& c, const char* status_line, const std::string& why) {
  // A whole head names the client's id; one cut off or never ended cannot be trusted to.
  const std::string sent =
      c.head_bytes > 0
          ? std::string(HeaderValue(c.received, c.head_bytes, kRequestIdName).value_or(""))
          : "";
  const std::string id = IsSaneRequestId(sent) ? sent : NewRequestId();
  ApiError error = MakeApiError(ErrorCode::kInvalidArgument, why);
  error.status = std::atoi(status_line);
  const std::string body =
      ApiErrorJson(error, ErrorShapeFor(MergedSlashes(RequestPath(c.received)))).dump();
  const std::string response = StrCat(
      "HTTP/1.1 ", status_line, "\r\n", kRequestIdHeader, ": ", id,
      "\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
      "\r\n\r\n", body);
  [[maybe_unused]] const ssize_t ignored =
      ::send(c.fd, response.data(), response.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  // As the access log names a routed request (access_log.h), which this one never was.
  std::string ip;
  int port = 0;
  AddressOf(c.fd, true, ip, port);
  LogEvent(LogLevel::kInfo, "request",
           {{"request_id", id},
            {"client", StrCat(ip, ":", port)},
            {"status", static_cast<int64_t>(error.status)},
            {"error", why}});
  Linger(c.fd);
}

void GatedHttpServer::Linger(int fd) {
  ::shutdown(fd, SHUT_WR);
  Connection c;
  c.fd = fd;
  c.draining = true;
  c.deadline = Clock::now() + std::chrono::milliseconds(kLingerMs);
  Enqueue(std::move(c));
}

void GatedHttpServer::Close(int fd) {
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

}  // namespace qvl
