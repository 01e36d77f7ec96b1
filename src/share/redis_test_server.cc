#include "share/redis_test_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace qvl {
namespace {

int ListenLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 16) != 0) {
    close(fd);
    throw std::runtime_error("cannot listen on 127.0.0.1");
  }
  return fd;
}

int PortOf(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

}  // namespace

int FreeLoopbackPort() {
  const int fd = ListenLoopback(0);
  const int port = PortOf(fd);
  close(fd);
  return port;
}

bool RedisTestServer::Available() { return std::system("command -v redis-server >/dev/null") == 0; }

RedisTestServer::RedisTestServer() : port_(FreeLoopbackPort()) { Start(); }

RedisTestServer::~RedisTestServer() { Kill(); }

void RedisTestServer::Start() {
  const std::string port = std::to_string(port_);
  pid_ = fork();
  if (pid_ == 0) {
    // Its output must not hold the caller's pipes open.
    (void)!freopen("/dev/null", "w", stdout);
    execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1", "--save",
           "", "--appendonly", "no", "--dir", "/tmp", "--loglevel", "warning",
           static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 200; ++i) {
    if (Cli("PING").find("PONG") != std::string::npos) return;
    usleep(25 * 1000);
  }
  throw std::runtime_error("redis-server did not answer PING on port " + port);
}

void RedisTestServer::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string RedisTestServer::Cli(const std::string& args) const {
  const std::string command =
      "redis-cli -h 127.0.0.1 -p " + std::to_string(port_) + " " + args + " 2>/dev/null";
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return {};
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  pclose(p);
  return out;
}

FakeRedisServer::FakeRedisServer(Mode mode) : mode_(mode), listen_fd_(ListenLoopback(0)) {
  port_ = PortOf(listen_fd_);
  thread_ = std::thread([this] { Run(); });
}

FakeRedisServer::FakeRedisServer(std::string reply) : FakeRedisServer(Mode::kGarbage) {
  reply_ = std::move(reply);
}

FakeRedisServer::~FakeRedisServer() {
  stop_ = true;
  thread_.join();
  close(listen_fd_);
}

void FakeRedisServer::Run() {
  std::vector<int> clients;
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 20) > 0) {
      const int c = accept(listen_fd_, nullptr, nullptr);
      if (c >= 0) clients.push_back(c);
    }
    for (int c : clients) {
      char buf[4096];
      pollfd q{c, POLLIN, 0};
      if (poll(&q, 1, 0) > 0 && read(c, buf, sizeof(buf)) > 0 && mode_ == Mode::kGarbage) {
        const std::string answer = reply_.empty() ? "?this is not redis\r\n" : reply_;
        (void)!write(c, answer.data(), answer.size());
      }
    }
  }
  for (int c : clients) close(c);
}

}  // namespace qvl
