#include "server/request_id.h"

#include <gtest/gtest.h>

#include <string>

namespace qvl {
namespace {

TEST(RequestIdTest, SaneIdsAreVisibleAsciiWithinTheBound) {
  EXPECT_TRUE(IsSaneRequestId("a"));
  EXPECT_TRUE(IsSaneRequestId("0f8fad5b-d9cb-469f-a165-70867728950e"));
  EXPECT_TRUE(IsSaneRequestId("!~{}[]/:=;,"));
  EXPECT_TRUE(IsSaneRequestId(std::string(kMaxClientRequestIdLength, 'x')));
  EXPECT_FALSE(IsSaneRequestId(""));
  EXPECT_FALSE(IsSaneRequestId(std::string(kMaxClientRequestIdLength + 1, 'x')));
  EXPECT_FALSE(IsSaneRequestId("a b"));
  EXPECT_FALSE(IsSaneRequestId("a\tb"));
  EXPECT_FALSE(IsSaneRequestId("a\nb"));
  EXPECT_FALSE(IsSaneRequestId("a\x7f"));
  EXPECT_FALSE(IsSaneRequestId("caf\xc3\xa9"));
}

TEST(RequestIdTest, FreshIdsDiffer) {
  const std::string a = NewRequestId();
  const std::string b = NewRequestId();
  EXPECT_NE(a, b);
  EXPECT_TRUE(IsSaneRequestId(a));
  EXPECT_EQ(a.rfind("req_", 0), 0u);
}

TEST(RequestIdTest, TheClientsSaneIdIsKeptAndAnExistingOneWins) {
  httplib::Request req;
  req.headers.emplace("X-Request-Id", "mine-1");
  httplib::Response res;
  SetRequestId(req, res);
  EXPECT_EQ(res.get_header_value("X-Request-Id"), "mine-1");

  httplib::Request other;
  other.headers.emplace("X-Request-Id", "other");
  SetRequestId(other, res);  // set once: later calls keep it
  EXPECT_EQ(res.get_header_value("X-Request-Id"), "mine-1");
  EXPECT_EQ(res.headers.count("X-Request-Id"), 1u);

  httplib::Request insane;
  insane.headers.emplace("X-Request-Id", "bad\r\nSet-Cookie: x");
  httplib::Response fresh;
  SetRequestId(insane, fresh);
  EXPECT_EQ(fresh.get_header_value("X-Request-Id").rfind("req_", 0), 0u);
}

}  // namespace
}  // namespace qvl
