#include "hub/hub_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "base/log.h"

namespace qvl::hub {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Lines logged while an object of this class lives.
class CapturedLog {
 public:
  CapturedLog() {
    SetLogSink([this](const std::string& line) { lines_.push_back(line); });
  }
  ~CapturedLog() { SetLogSink(nullptr); }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  std::vector<std::string> lines_;
};

TEST(HubApiTest, LoopbackUrls) {
  for (const char* url : {"http://127.0.0.1:8080", "http://localhost", "http://LOCALHOST:1/x",
                          "http://[::1]:9", "http://127.1.2.3", "http://hub.localhost:5"}) {
    EXPECT_TRUE(IsLoopbackUrl(url)) << url;
  }
  for (const char* url :
       {"http://hf-mirror.com", "http://127.0.0.1.evil.example", "http://10.0.0.1",
        "http://localhost.example", "http://[::2]", "hf-mirror.com"}) {
    EXPECT_FALSE(IsLoopbackUrl(url)) << url;
  }
}

// A token never crosses the network in cleartext: plain http is for this machine only.
TEST(HubApiTest, TokenIsWithheldFromPlainHttpToAnotherHost) {
  HubAccess access;
  access.endpoint = "http://hf-mirror.example";
  {
    CapturedLog log;
    SetHubToken(&access, "hf_secret");
    ASSERT_EQ(log.lines().size(), 1u);
    EXPECT_THAT(log.lines()[0], HasSubstr("not sending the access token to "
                                          "http://hf-mirror.example: plain http"));
    EXPECT_THAT(log.lines()[0], Not(HasSubstr("hf_secret")));
  }
  EXPECT_EQ(access.token, "");
  EXPECT_TRUE(access.token_withheld);
  for (const std::string& header : HubHeaders(access, true)) {
    EXPECT_THAT(header, Not(HasSubstr("Authorization")));
  }

  HttpResponse refused;
  refused.status = 401;
  refused.url = "http://hf-mirror.example/api/models/org/gated/revision/main";
  try {
    FailForResponse(refused, access, "org/gated", "revision main");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnauthenticated);
    EXPECT_THAT(e.what(), HasSubstr("the access token was not sent because "
                                    "http://hf-mirror.example is plain http; use an https:// "
                                    "endpoint"));
  }

  for (const char* endpoint : {"https://hf-mirror.example", "http://127.0.0.1:8080"}) {
    access.endpoint = endpoint;
    SetHubToken(&access, "hf_secret");
    EXPECT_EQ(access.token, "hf_secret") << endpoint;
    EXPECT_FALSE(access.token_withheld) << endpoint;
  }
}

}  // namespace
}  // namespace qvl::hub
