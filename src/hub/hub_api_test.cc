#include "hub/hub_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/captured_log.h"
#include "base/error.h"
#include "base/log.h"

namespace qvl::hub {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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

HttpResponse Answer(long status, const std::string& retry_after) {
  HttpResponse response;
  response.status = status;
  if (!retry_after.empty()) response.headers.Add("Retry-After", retry_after);
  return response;
}

TEST(HubApiTest, RetryAfterInSecondsOrAsAnHttpDate) {
  const std::time_t now = 1445412450;  // Wed, 21 Oct 2015 07:27:30 GMT
  EXPECT_EQ(RetryAfterSeconds(Answer(429, "7").headers, now), 7.0);
  EXPECT_EQ(RetryAfterSeconds(Answer(503, "Wed, 21 Oct 2015 07:28:00 GMT").headers, now), 30.0);
  EXPECT_EQ(RetryAfterSeconds(Answer(503, "Wed, 21 Oct 2015 07:00:00 GMT").headers, now), 0.0);
  EXPECT_EQ(RetryAfterSeconds(Answer(503, "soon").headers, now), std::nullopt);
  EXPECT_EQ(RetryAfterSeconds(Answer(503, "").headers, now), std::nullopt);
}

TEST(HubApiTest, RetryDelayHonoursRetryAfterUpToTheCap) {
  RetryPolicy retry;  // 1 s doubled per failure
  EXPECT_EQ(RetryDelaySeconds(retry, 1, Answer(429, "7")), 7.0);
  EXPECT_EQ(RetryDelaySeconds(retry, 3, Answer(503, "2")), 2.0);
  EXPECT_EQ(RetryDelaySeconds(retry, 1, Answer(429, "3600")), kMaxRetryAfterSeconds);
  EXPECT_EQ(RetryDelaySeconds(retry, 3, Answer(429, "")), 4.0);
  EXPECT_EQ(RetryDelaySeconds(retry, 3, Answer(500, "7")), 4.0);
  EXPECT_EQ(FormatWait(7), "7 s");
  EXPECT_EQ(FormatWait(0.01), "0.01 s");
  EXPECT_EQ(FormatWait(60), "60 s");
}

}  // namespace
}  // namespace qvl::hub
