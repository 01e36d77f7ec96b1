#include "server/gated_http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/captured_log.h"
#include "base/error.h"

namespace qvl {
namespace {

// A raw client connection, so that requests can be as broken and as slow as an attacker
// makes them. Reads give up after 20 s (a hang is a failure, not a wait).
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    const timeval timeout{20, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }
  ~RawConnection() { ::close(fd_); }

  void Send(const std::string& text) {
    ASSERT_EQ(::send(fd_, text.data(), text.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(text.size()));
  }
  // Everything until the server closes the connection.
  std::string ReadAll() {
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = ::recv(fd_, buffer, sizeof(buffer), 0)) > 0) out.append(buffer, n);
    closed_ = n == 0;
    return out;
  }
  // At least `bytes` bytes (or less if the connection ends first).
  std::string Read(size_t bytes) {
    std::string out;
    char buffer[4096];
    while (out.size() < bytes) {
      const ssize_t n = ::recv(fd_, buffer, std::min(sizeof(buffer), bytes - out.size()), 0);
      if (n <= 0) break;
      out.append(buffer, n);
    }
    return out;
  }
  bool closed_by_server() const { return closed_; }

 private:
  int fd_;
  bool closed_ = false;
};

class GatedHttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<GatedHttpServer>(
        GateLimits{.max_head_bytes = 2048, .head_timeout_ms = 1000, .max_waiting = 64});
    server_->SetWorkerThreads(2);
    server_->Get("/hello", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("hello", "text/plain");
    });
    server_->Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.body, "text/plain");
    });
    server_->Post("/refuse", [](const httplib::Request&, httplib::Response& res,
                                const httplib::ContentReader&) {
      res.status = 401;
      res.set_content("no", "text/plain");
    });
    // An old name of /hello, renamed before routing.
    server_->SetRequestSetup([](httplib::Request& req) {
      if (req.path == "/greeting") req.path = "/hello";
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    server_->WidenBacklog();
    listener_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void TearDown() override {
    server_->Shutdown();
    listener_.join();
  }

  std::unique_ptr<GatedHttpServer> server_;
  std::thread listener_;
  int port_ = 0;
};

TEST_F(GatedHttpServerTest, ServesKeepAliveAndPipelinedRequests) {
  httplib::Client client("127.0.0.1", port_);
  client.set_keep_alive(true);
  for (int i = 0; i < 3; ++i) {
    const httplib::Result r = client.Get("/hello");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "hello");
  }
  const httplib::Result echo = client.Post("/echo", std::string(100000, 'b'), "text/plain");
  ASSERT_TRUE(echo);
  EXPECT_EQ(echo->body, std::string(100000, 'b'));

  RawConnection raw(port_);
  raw.Send(
      "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc"
      "GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  const std::string both = raw.ReadAll();
  EXPECT_NE(both.find("\r\n\r\nabc"), std::string::npos) << both;
  EXPECT_NE(both.find("\r\n\r\nhello"), std::string::npos) << both;
}

TEST_F(GatedHttpServerTest, TheRequestSetupRunsBeforeRouting) {
  httplib::Client client("127.0.0.1", port_);
  const httplib::Result renamed = client.Get("/greeting?x=1");
  ASSERT_TRUE(renamed);
  EXPECT_EQ(renamed->status, 200);
  EXPECT_EQ(renamed->body, "hello");
  const httplib::Result other = client.Get("/greetings");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
}

// Each answered at once: before, httplib waited for a body of 2^64 - 5 bytes, for one
// read until the client closed, and told the client to send one over the limit.
TEST_F(GatedHttpServerTest, BodyLengthsAreSettledFromTheHead) {
  server_->set_payload_max_length(size_t{1} << 20);
  {
    RawConnection raw(port_);
    raw.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: -5\r\n\r\n");
    EXPECT_EQ(raw.ReadAll().rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u);
  }
  {
    RawConnection raw(port_);
    raw.Send("POST /echo HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    const std::string answer = raw.ReadAll();
    EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer;
    EXPECT_NE(answer.find("Content-Length: 0\r\n"), std::string::npos) << answer;
  }
  {
    // The same length twice is one length (two that differ are refused: see below).
    RawConnection raw(port_);
    raw.Send(
        "POST /echo HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: 2\r\n"
        "content-length:  2\r\n\r\n{}");
    const std::string answer = raw.ReadAll();
    EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer;
    EXPECT_EQ(answer.substr(answer.size() - 2), "{}") << answer;
  }
  {
    RawConnection raw(port_);
    raw.Send(
        "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10000000\r\n"
        "Expect: 100-continue\r\n\r\n");
    const std::string answer = raw.ReadAll();
    EXPECT_EQ(answer.rfind("HTTP/1.1 413 Payload Too Large\r\n", 0), 0u) << answer;
    EXPECT_EQ(answer.find("100 Continue"), std::string::npos) << answer;
  }
}

// With "Expect: 100-continue" (curl's default for big uploads) a body over the limit is
// refused as one without it is: through the error handler, which writes the API's JSON
// error, not with an empty body; and logged.
TEST_F(GatedHttpServerTest, A413BeforeContinueCarriesTheErrorHandlersBody) {
  server_->set_payload_max_length(size_t{1} << 20);
  server_->set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.status == 413) res.set_content(R"({"error":{"code":"too_large"}})", "application/json");
  });
  std::atomic<int> logged{0};
  server_->set_logger([&](const httplib::Request& req, const httplib::Response& res) {
    if (req.path == "/echo" && res.status == 413) ++logged;
  });
  // Without Expect the body comes at once (httplib reads and discards it).
  const std::string over(size_t{1} << 20 | 1, 'x');
  for (const bool expect : {true, false}) {
    SCOPED_TRACE(expect);
    RawConnection raw(port_);
    raw.Send(StrCat("POST /echo HTTP/1.1\r\nHost: t\r\nConnection: close\r\n",
                    expect ? "Content-Length: 10000000\r\nExpect: 100-continue\r\n\r\n"
                           : StrCat("Content-Length: ", over.size(), "\r\n\r\n", over)));
    const std::string answer = raw.ReadAll();
    EXPECT_EQ(answer.rfind("HTTP/1.1 413 Payload Too Large\r\n", 0), 0u) << answer;
    EXPECT_EQ(answer.find("100 Continue"), std::string::npos) << answer;
    EXPECT_NE(answer.find("\r\n\r\n{\"error\":{\"code\":\"too_large\"}}"), std::string::npos)
        << answer;
  }
  EXPECT_EQ(logged.load(), 2);
}

TEST_F(GatedHttpServerTest, SlowHeadsDoNotHoldTheWorkers) {
  // Far more slow clients than worker threads, each with half a head.
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 20; ++i) {
    slow.push_back(std::make_unique<RawConnection>(port_));
    slow.back()->Send("GET /hello HTTP/1.1\r\nHost: t\r\nX-Slow: ");
  }
  RawConnection fast(port_);
  fast.Send("GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(fast.ReadAll().substr(0, 15), "HTTP/1.1 200 OK");
  // The slow ones are answered 408 once their time is up.
  EXPECT_EQ(slow[0]->ReadAll().substr(0, 12), "HTTP/1.1 408");
  EXPECT_TRUE(slow[0]->closed_by_server());
}

TEST_F(GatedHttpServerTest, HeadOverTheLimitIs431) {
  RawConnection raw(port_);
  std::string head = "GET /hello HTTP/1.1\r\nHost: t\r\n";
  while (head.size() < 4096) head += "X-Flood: " + std::string(50, 'v') + "\r\n";
  raw.Send(head);
  EXPECT_EQ(raw.ReadAll().substr(0, 12), "HTTP/1.1 431");
  EXPECT_TRUE(raw.closed_by_server());
}

// A reply's X-Request-Id, "" when it has none.
std::string RequestIdOf(const std::string& response) {
  const std::string name = "\r\nX-Request-Id: ";
  const size_t at = response.find(name);
  if (at == std::string::npos || at > response.find("\r\n\r\n")) return "";
  const size_t begin = at + name.size();
  return response.substr(begin, response.find("\r\n", begin) - begin);
}

// Refused before any route runs, each reply still names its request as every routed one
// does, and the log line of the refusal names it too: a fresh id where the head is cut
// off or never ends (the client's id in it cannot be trusted), the client's own where
// the head is whole.
TEST_F(GatedHttpServerTest, RefusalsBeforeRoutingNameTheirRequest) {
  CapturedLog log;
  struct Case {
    std::string sent;
    std::string status;
    std::string error;
    std::string client_id;  // echoed; "" = a fresh id
  };
  std::string flood = "GET /hello HTTP/1.1\r\nX-Request-Id: client-431\r\n";
  while (flood.size() < 4096) flood += "X-Flood: " + std::string(50, 'v') + "\r\n";
  const Case cases[] = {
      {"GET /hello HTTP/1.1\r\nX-Request-Id: client-408\r\nX-Slow: ", "408",
       "the request line and headers did not arrive within 1000 ms", ""},
      {flood, "431", "the request line and headers are over 2048 bytes", ""},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nX-Request-Id: client-400\r\nContent-Length: -5\r\n\r\n",
       "400", "Content-Length is not a number of bytes", "client-400"},
      {"POST //api/chat HTTP/1.1\r\nHost: t\r\nX-Request-Id: ollama-400\r\nContent-Length: "
       "1e3\r\n\r\n",
       "400", "Content-Length is not a number of bytes", "ollama-400"},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nX-Request-Id: twice-400\r\nContent-Length: 2\r\n"
       "content-length: 20\r\n\r\n{}",
       "400", "Content-Length is given twice with different values", "twice-400"},
  };
  std::set<std::string> ids;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.status);
    RawConnection raw(port_);
    raw.Send(c.sent);
    const std::string response = raw.ReadAll();
    EXPECT_EQ(response.rfind("HTTP/1.1 " + c.status + " ", 0), 0u) << response;
    // The client reads why too, in the error shape of the API it called.
    const size_t body = response.find("\r\n\r\n");
    ASSERT_NE(body, std::string::npos) << response;
    const nlohmann::json error = nlohmann::json::parse(response.substr(body + 4), nullptr, false);
    if (c.client_id == "ollama-400") {
      EXPECT_EQ(error, nlohmann::json({{"error", c.error}})) << response;
    } else {
      EXPECT_EQ(error["error"]["message"], c.error) << response;
      EXPECT_EQ(error["error"]["type"], "invalid_request_error") << response;
    }
    EXPECT_NE(response.find("\r\nContent-Type: application/json\r\n"), std::string::npos)
        << response;
    const std::string id = RequestIdOf(response);
    if (c.client_id.empty()) {
      EXPECT_EQ(id.size(), 4u + 24u) << response;
      EXPECT_EQ(id.rfind("req_", 0), 0u) << response;
    } else {
      EXPECT_EQ(id, c.client_id) << response;
    }
    ids.insert(id);
    const std::string line = log.WaitFor({" request request_id=" + id + " "});
    EXPECT_NE(line.find(" client=127.0.0.1:"), std::string::npos) << line;
    EXPECT_NE(line.find(" status=" + c.status + " error=\"" + c.error + "\""), std::string::npos)
        << line;
  }
  EXPECT_EQ(ids.size(), std::size(cases));
}

TEST_F(GatedHttpServerTest, AnUnreadBodyEndsTheConnection) {
  RawConnection raw(port_);
  // 100 MB announced, 10 bytes sent: the answer comes at once and the connection closes.
  raw.Send("POST /refuse HTTP/1.1\r\nHost: t\r\nContent-Length: 100000000\r\n\r\n0123456789");
  const std::string response = raw.ReadAll();
  EXPECT_EQ(response.substr(0, 12), "HTTP/1.1 401");
  EXPECT_TRUE(raw.closed_by_server());
}

TEST_F(GatedHttpServerTest, AnAnswerBeforeTheBodySurvivesTheRestOfTheBody) {
  // The client sends all of a 4 MB body after the server has answered: closing with
  // unread input would reset the connection and lose the answer (and fail this send).
  RawConnection raw(port_);
  const std::string body(size_t{4} << 20, 'x');
  raw.Send(StrCat("POST /refuse HTTP/1.1\r\nHost: t\r\nContent-Length: ", body.size(), "\r\n\r\n",
                  body));
  EXPECT_EQ(raw.ReadAll().substr(0, 12), "HTTP/1.1 401");
  EXPECT_TRUE(raw.closed_by_server());
}

TEST_F(GatedHttpServerTest, IdleConnectionsAreClosedWithoutAnAnswer) {
  RawConnection raw(port_);
  raw.Send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
  const std::string first = raw.Read(1);
  ASSERT_EQ(first, "H");
  const std::string rest = raw.ReadAll();
  EXPECT_EQ(rest.find("HTTP/1.1 408"), std::string::npos) << rest;
  EXPECT_TRUE(raw.closed_by_server());
}

TEST_F(GatedHttpServerTest, ShutdownClosesWaitingConnections) {
  RawConnection raw(port_);
  raw.Send("GET /hel");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  server_->Shutdown();
  EXPECT_EQ(raw.ReadAll(), "");
  EXPECT_TRUE(raw.closed_by_server());
}

}  // namespace
}  // namespace qvl
