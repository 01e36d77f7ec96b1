// X-Request-Id over real sockets: every response carries one (answers, errors, streams,
// the web page), a client's sane id comes back as it was sent, and the access line names
// the request by it.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "base/captured_log.h"
#include "server/request_id.h"
#include "server_harness.h"

namespace qvl::testing {
namespace {

class ServerRequestIdTest : public SharedServerTest {
 protected:
  static nlohmann::json TextRequest(bool stream) {
    return {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
            {"max_tokens", 2},
            {"temperature", 0},
            {"stream", stream}};
  }

  static httplib::Result Post(const std::string& path, const std::string& body,
                              const httplib::Headers& headers = {}) {
    httplib::Client client = harness_->Client();
    return client.Post(path, headers, body, "application/json");
  }

  // The id of a response, checked to be one the server made.
  static std::string FreshId(const httplib::Result& r) {
    EXPECT_TRUE(r);
    if (!r) return "";
    const std::string id = r->get_header_value("X-Request-Id");
    EXPECT_EQ(id.size(), 4u + 24u) << id;
    EXPECT_EQ(id.rfind("req_", 0), 0u) << id;
    return id;
  }
};

TEST_F(ServerRequestIdTest, EveryResponseCarriesOne) {
  httplib::Client client = harness_->Client();
  std::set<std::string> ids;

  const httplib::Result answer = Post("/v1/chat/completions", TextRequest(false).dump());
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200) << answer->body;
  ids.insert(FreshId(answer));
  // The completion keeps its own id beside the request's.
  EXPECT_EQ(nlohmann::json::parse(answer->body)["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);

  const httplib::Result stream = Post("/v1/chat/completions", TextRequest(true).dump());
  ASSERT_TRUE(stream);
  EXPECT_EQ(stream->status, 200);
  EXPECT_NE(stream->body.find("data: [DONE]"), std::string::npos) << stream->body;
  ids.insert(FreshId(stream));

  const httplib::Result bad = Post("/v1/chat/completions", R"({"messages": 5})");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  ids.insert(FreshId(bad));

  const httplib::Result bad_ollama = Post("/api/chat", R"({"model": 5})");
  ASSERT_TRUE(bad_ollama);
  EXPECT_EQ(bad_ollama->status, 400);
  ids.insert(FreshId(bad_ollama));

  const httplib::Result missing = client.Get("/v2/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  ids.insert(FreshId(missing));

  const httplib::Result not_allowed = client.Get("/v1/chat/completions");
  ASSERT_TRUE(not_allowed);
  EXPECT_EQ(not_allowed->status, 405);
  ids.insert(FreshId(not_allowed));

  const httplib::Result health = client.Get("/health");
  ASSERT_TRUE(health);
  ids.insert(FreshId(health));

  const httplib::Result page = client.Get("/");
  ASSERT_TRUE(page);
  ids.insert(FreshId(page));

  const httplib::Result preflight = client.Options(
      "/v1/chat/completions",
      {{"Origin", "http://example.test"}, {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(preflight);
  EXPECT_EQ(preflight->status, 204);
  ids.insert(FreshId(preflight));
  // A page on another origin may send its own and read the server's.
  EXPECT_NE(preflight->get_header_value("Access-Control-Allow-Headers").find("X-Request-Id"),
            std::string::npos);
  EXPECT_NE(answer->get_header_value("Access-Control-Expose-Headers").find("X-Request-Id"),
            std::string::npos);

  EXPECT_EQ(ids.size(), 9u) << "every request gets an id of its own";
}

TEST_F(ServerRequestIdTest, AClientsSaneIdIsEchoed) {
  const std::string sent = "gw-7f3c2a/trace:00-4bf92f3577b34da6a3ce929d0e0e4736-01";
  httplib::Result r =
      Post("/v1/chat/completions", TextRequest(false).dump(), {{"X-Request-Id", sent}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("X-Request-Id"), sent);

  r = Post("/v1/chat/completions", TextRequest(true).dump(), {{"x-request-id", sent}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get_header_value("X-Request-Id"), sent);

  r = Post("/v1/chat/completions", "{", {{"X-Request-Id", sent}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(r->get_header_value("X-Request-Id"), sent);

  const std::string longest(kMaxClientRequestIdLength, 'a');
  r = Post("/v1/chat/completions", "{", {{"X-Request-Id", longest}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get_header_value("X-Request-Id"), longest);
}

TEST_F(ServerRequestIdTest, AnInsaneIdIsReplaced) {
  for (const std::string& sent : {std::string(kMaxClientRequestIdLength + 1, 'a'),
                                  std::string("abc\x01"
                                              "def"),
                                  std::string("two words"), std::string("caf\xc3\xa9")}) {
    SCOPED_TRACE(sent);
    const httplib::Result r = Post("/v1/chat/completions", "{", {{"X-Request-Id", sent}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400);
    EXPECT_NE(FreshId(r), sent);
  }
}

TEST_F(ServerRequestIdTest, TheAccessLineNamesTheRequest) {
  CapturedLog log;
  const httplib::Result fresh = Post("/v1/chat/completions", TextRequest(false).dump());
  const std::string id = FreshId(fresh);
  const std::string line = log.WaitFor({" request ", "request_id=" + id + " "});
  EXPECT_NE(line.find(" request request_id=" + id + " client=127.0.0.1:"), std::string::npos)
      << line;
  EXPECT_NE(line.find(" status=200 "), std::string::npos) << line;

  // An error's line says what the client was told.
  const httplib::Result bad =
      Post("/v1/chat/completions", R"({"messages": 5})", {{"X-Request-Id", "client-id-42"}});
  ASSERT_TRUE(bad);
  const std::string error_line = log.WaitFor({"request_id=client-id-42 "});
  EXPECT_NE(error_line.find(" status=400 "), std::string::npos) << error_line;
  EXPECT_NE(error_line.find(" error=\"messages: "), std::string::npos) << error_line;
}

}  // namespace
}  // namespace qvl::testing
