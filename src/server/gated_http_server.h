// An httplib::Server whose worker threads only ever see connections that have sent a
// whole request head. Plain httplib gives each connection a pool thread from accept to
// close, its read timeout is per read, and it buffers any number of header lines (and a
// request line of any length): a client trickling a byte a second holds a thread for
// ever, a few of them (slow-loris) starve every other client, and one can make it buffer
// gigabytes of headers. Here a connection first waits in one poll() thread, the gate,
// which reads its head into a buffer of at most `max_head_bytes`; only a complete head is
// handed to a worker, which runs httplib's own request processing (routing, bodies,
// responses, keep-alive) on it, then gives the connection back to the gate. A head that
// is not complete within `head_timeout_ms` gets 408, one over the size limit 431; each
// refusal carries an X-Request-Id and is logged with it, as routed requests are.
// Connections answered before their body was read are closed lingering (see Linger).
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace qvl {

struct GateLimits {
  size_t max_head_bytes = size_t{64} << 10;  // request line and headers
  int head_timeout_ms = 30000;  // to send a whole head, from connect or the previous response
  size_t max_waiting = 512;     // connections in the gate; beyond, the longest waiting goes
  int max_requests_per_connection = 100;
};

class GatedHttpServer : public httplib::Server {
 public:
  explicit GatedHttpServer(GateLimits limits = {});
  ~GatedHttpServer() override;
  GatedHttpServer(const GatedHttpServer&) = delete;
  GatedHttpServer& operator=(const GatedHttpServer&) = delete;

  // Threads that run requests; must be called before listening. (It replaces
  // new_task_queue: httplib's accept loop only hands connections to the gate.)
  void SetWorkerThreads(int threads);

  // Runs on each request once its head is parsed, before routing and every handler
  // (httplib's setup_request): the place to rewrite its path. Must be called before
  // listening.
  void SetRequestSetup(std::function<void(httplib::Request&)> setup);

  // Raises the listening socket's backlog to the system's maximum; call after binding.
  // httplib listens with a backlog of 5, and a burst of clients beyond it overflows the
  // accept queue: their handshakes fall back to SYN cookies, and some get a reset.
  void WidenBacklog();

  // Closes the connections waiting in the gate, stops listening (like stop()) and waits
  // for the requests being run.
  void Shutdown();

 private:
  using Clock = std::chrono::steady_clock;

  struct Connection {
    int fd = -1;
    std::string received;   // bytes read but not yet processed: the head, maybe more
    size_t head_bytes = 0;  // the head's length within `received`, once complete
    int served = 0;         // requests answered on this connection
    bool draining = false;  // answered and shut for writing; unread input is discarded
    Clock::time_point deadline;
  };
  enum class ReadResult { kPending, kComplete, kClosed, kTooLarge };

  bool process_and_close_socket(socket_t sock) override;

  // Hands `c` to the gate, or to a worker at once when `received` already holds a head.
  void Wait(Connection c);
  // Hands `c` to the gate thread (closes it when the server is stopping).
  void Enqueue(Connection c);
  void GateLoop();
  ReadResult ReadHead(Connection& c) const;
  void Dispatch(Connection c);
  // Why a head is refused before httplib sees it (a Content-Length that is not a number,
  // or two that differ), empty when it is not; gives a body-less POST, PUT or PATCH
  // "Content-Length: 0".
  std::string_view CheckHead(Connection& c) const;
  void Serve(Connection c);  // on a worker: one request, then back to the gate
  // Answers `status_line` with `why` as a JSON error (in the shape of the API the request
  // line names, routes.h) and closes, lingering. The reply carries an
  // X-Request-Id as every routed one does (request_id.h): the client's own when its head
  // is whole and names a sane one, else a fresh one; the refusal is logged with it and
  // `why`.
  void Refuse(const Connection& c, const char* status_line, const std::string& why);
  // Closes after the client has had time to read the response: closing a socket with
  // unread input sends a reset, which can destroy the response still in flight (a 503 or
  // 413 answered before a large body arrived). The gate discards input until the client
  // closes or `kLingerMs` pass.
  void Linger(int fd);
  static void Close(int fd);
  static constexpr int kLingerMs = 2000;

  GateLimits limits_;
  std::unique_ptr<httplib::ThreadPool> workers_;
  std::function<void(httplib::Request&)> setup_request_;
  std::thread gate_;
  int wake_fd_ = -1;    // eventfd that interrupts the gate's poll()
  int listen_fd_ = -1;  // the listening socket, once bound

  std::mutex mutex_;
  std::vector<Connection> incoming_;  // handed in, not yet seen by the gate thread
  bool stopping_ = false;
};

}  // namespace qvl
