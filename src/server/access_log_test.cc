#include "server/access_log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/captured_log.h"
#include "base/log.h"

namespace qvl {
namespace {

class AccessLogTest : public ::testing::Test {
 protected:
  void TearDown() override { SetLogFormat(LogFormat::kText); }

  std::string Line(const httplib::Headers& headers, const httplib::Headers& response_headers = {},
                   const std::string& error = "") {
    httplib::Request req;
    req.remote_addr = "10.0.0.2";  // nginx
    req.remote_port = 41000;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.headers = headers;
    httplib::Response res;
    res.status = error.empty() ? 200 : 400;
    res.headers = response_headers;
    log_.Clear();
    BeginAccessRecord();
    if (!error.empty()) RecordError(error);
    LogAccess(req, res);
    return lines_.size() == 1 ? lines_[0] : "";
  }
  CapturedLog log_;
  const std::vector<std::string>& lines_ = log_.lines();
};

TEST_F(AccessLogTest, BehindAProxyTheForwardedClientAndTheSessionAreLogged) {
  const std::string line =
      Line({{"X-Forwarded-For", " 203.0.113.7 , 10.0.0.9"}, {"X-Session-Id", "conv-42"}});
  EXPECT_NE(line.find(" request client=10.0.0.2:41000 forwarded_for=203.0.113.7 session=conv-42 "
                      "method=POST path=/v1/chat/completions status=200 "),
            std::string::npos)
      << line;
}

TEST_F(AccessLogTest, WithoutTheHeadersTheLineIsAsBefore) {
  const std::string line = Line({});
  EXPECT_NE(line.find(" request client=10.0.0.2:41000 method=POST path=/v1/chat/completions "
                      "status=200 "),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find("forwarded_for"), std::string::npos) << line;
  EXPECT_EQ(line.find("session"), std::string::npos) << line;
}

// The headers are the client's words: quoted, cut, and never a line of their own.
TEST_F(AccessLogTest, ClientChosenValuesCannotForgeFields) {
  const std::string line = Line(
      {{"X-Session-Id", "a b status=500\nI forged"}, {"X-Forwarded-For", std::string(500, '1')}});
  EXPECT_NE(line.find(" session=\"a b status=500\\nI forged\" "), std::string::npos) << line;
  EXPECT_NE(line.find(" forwarded_for=" + std::string(128, '1') + " "), std::string::npos) << line;
  EXPECT_EQ(line.find(std::string(129, '1')), std::string::npos) << line;
}

TEST_F(AccessLogTest, JsonLinesCarryThemAsMembers) {
  SetLogFormat(LogFormat::kJson);
  const std::string line = Line({{"X-Forwarded-For", "198.51.100.1"}, {"X-Session-Id", "s1"}});
  EXPECT_NE(
      line.find(R"("client":"10.0.0.2:41000","forwarded_for":"198.51.100.1","session":"s1",)"),
      std::string::npos)
      << line;
}

TEST_F(AccessLogTest, TheResponsesRequestIdLeadsTheLine) {
  const std::string line = Line({{"X-Request-Id", "what-the-client-sent"}},
                                {{"X-Request-Id", "req_0123456789abcdef01234567"}});
  EXPECT_NE(line.find(" request request_id=req_0123456789abcdef01234567 client=10.0.0.2:41000 "),
            std::string::npos)
      << line;
}

TEST_F(AccessLogTest, AnErrorsLineCarriesItsMessage) {
  std::string line = Line({}, {}, "messages: expected an array, got number");
  EXPECT_NE(line.find(" status=400 "), std::string::npos) << line;
  EXPECT_NE(line.find(" error=\"messages: expected an array, got number\""), std::string::npos)
      << line;
  // The first error the request was answered with is the one kept.
  log_.Clear();
  BeginAccessRecord();
  RecordError("first");
  RecordError("second");
  httplib::Request req;
  httplib::Response res;
  res.status = 400;
  LogAccess(req, res);
  ASSERT_EQ(lines_.size(), 1u);
  line = lines_[0];
  EXPECT_NE(line.find(" error=first"), std::string::npos) << line;
  EXPECT_EQ(line.find("second"), std::string::npos) << line;
}

}  // namespace
}  // namespace qvl
