// Test helpers: a real redis-server on a loopback port (in a scratch folder, no
// persistence), and fake servers that accept connections and then stall or answer
// garbage.
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <utility>

namespace qvl {

class RedisTestServer {
 public:
  // Whether redis-server is on the PATH; tests skip with a message when it is not.
  static bool Available();
  RedisTestServer();  // starts it and waits until it answers PING
  ~RedisTestServer();
  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  void Kill();   // SIGKILL, waits for the exit
  void Start();  // on the same port
  // Runs redis-cli against the server; its standard output.
  std::string Cli(const std::string& args) const;

 private:
  int port_ = 0;
  int pid_ = -1;
};

// Listens on a loopback port; every command it reads gets, per mode, no answer, bytes
// that are not the Redis protocol, or a given reply.
class FakeRedisServer {
 public:
  enum class Mode { kStall, kGarbage };
  explicit FakeRedisServer(Mode mode);
  explicit FakeRedisServer(std::string reply);
  ~FakeRedisServer();
  int port() const { return port_; }

 private:
  void Run();
  Mode mode_;
  std::string reply_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A free loopback TCP port (bound, then released).
int FreeLoopbackPort();

}  // namespace qvl
