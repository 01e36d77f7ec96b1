#include "share/redis_fault_log.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/captured_log.h"
#include "base/log.h"

namespace qvl {
namespace {

using std::chrono::seconds;

class RedisFaultLogTest : public ::testing::Test {
 protected:
  CapturedLog log_;
  const std::vector<std::string>& lines_ = log_.lines();
};

TEST_F(RedisFaultLogTest, KindsAreFaultsAndRedisErrorCodes) {
  EXPECT_EQ(RedisFaultLog::KindOf(RedisFault::kErrorReply, "NOPERM this user has no permissions"),
            "error_reply NOPERM");
  EXPECT_EQ(RedisFaultLog::KindOf(RedisFault::kErrorReply, "ERR DB index is out of range"),
            "error_reply ERR");
  EXPECT_EQ(RedisFaultLog::KindOf(RedisFault::kErrorReply, "odd message"), "error_reply");
  EXPECT_EQ(RedisFaultLog::KindOf(RedisFault::kTimeout, "no reply within 300 ms"), "timeout");
}

TEST_F(RedisFaultLogTest, FirstFaultOfEachKindAtOnceThenOnceAMinuteWithACount) {
  RedisFaultLog log("10.0.0.5:6379");
  const auto t0 = RedisFaultLog::Clock::now();
  const std::string noperm = "NOPERM this user has no permissions to access one of the keys";
  log.Record(RedisFault::kErrorReply, "GET", noperm, "going on without the shared cache", t0);
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find(" W redis 10.0.0.5:6379: error_reply NOPERM to GET: " + noperm),
            std::string::npos)
      << lines_[0];
  EXPECT_NE(lines_[0].find("going on without the shared cache"), std::string::npos);
  EXPECT_NE(lines_[0].find("~qvl:*"), std::string::npos) << "a hint for the operator";

  // Within the minute: counted, not logged; another error code has its own first line.
  for (int i = 1; i <= 3; ++i)
    log.Record(RedisFault::kErrorReply, "SET", noperm, "the value is not stored", t0 + seconds(i));
  log.Record(RedisFault::kErrorReply, "SET",
             "OOM command not allowed when used memory > 'maxmemory'.", "the value is not stored",
             t0 + seconds(5));
  log.Record(RedisFault::kTimeout, "GET", "no reply within 300 ms", "skipping Redis",
             t0 + seconds(6));
  ASSERT_EQ(lines_.size(), 3u);
  EXPECT_NE(lines_[1].find("error_reply OOM to SET: OOM command not allowed"), std::string::npos)
      << lines_[1];
  EXPECT_NE(lines_[1].find("allkeys-lru"), std::string::npos) << lines_[1];
  EXPECT_NE(lines_[2].find("timeout to GET: no reply within 300 ms; skipping Redis"),
            std::string::npos)
      << lines_[2];

  log.Record(RedisFault::kErrorReply, "GET", noperm, "going on", t0 + seconds(61));
  ASSERT_EQ(lines_.size(), 4u);
  EXPECT_NE(lines_[3].find("4 more error_reply NOPERM faults in the last 61 s; the latest, to "
                           "GET: " +
                           noperm),
            std::string::npos)
      << lines_[3];
  // The count starts again from that line.
  log.Record(RedisFault::kErrorReply, "GET", noperm, "going on", t0 + seconds(100));
  EXPECT_EQ(lines_.size(), 4u);
  log.Record(RedisFault::kErrorReply, "GET", noperm, "going on", t0 + seconds(122));
  ASSERT_EQ(lines_.size(), 5u);
  EXPECT_NE(lines_[4].find("2 more error_reply NOPERM faults in the last 61 s"), std::string::npos)
      << lines_[4];
}

TEST_F(RedisFaultLogTest, TheFirstConnectionIsLoggedOnce) {
  RedisFaultLog log("127.0.0.1:6379");
  log.Connected(", database 0");
  log.Connected(", database 0");
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find(" I redis 127.0.0.1:6379: connected, database 0"), std::string::npos)
      << lines_[0];
}

}  // namespace
}  // namespace qvl
