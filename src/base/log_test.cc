#include "base/log.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "base/captured_log.h"

namespace qvl {
namespace {

class LogTest : public ::testing::Test {
 protected:
  void TearDown() override { SetLogFormat(LogFormat::kText); }
  CapturedLog log_;
  const std::vector<std::string>& lines_ = log_.lines();
};

TEST_F(LogTest, TextLinesWithFields) {
  LogInfo("listening on ", 8080);
  LogEvent(LogLevel::kWarn, "request",
           {{"method", "GET"}, {"status", 200}, {"total_ms", 12.345}, {"error", "went \"away\""}});
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_TRUE(std::regex_match(
      lines_[0], std::regex(R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} I listening on 8080)")))
      << lines_[0];
  EXPECT_NE(lines_[1].find(" W request method=GET status=200 total_ms=12.3 "
                           "error=\"went \\\"away\\\"\""),
            std::string::npos)
      << lines_[1];
}

TEST_F(LogTest, AValueCannotSplitTheLine) {
  LogEvent(LogLevel::kInfo, "request", {{"path", "/a\nI forged b=c"}, {"plain", "/v1/models"}});
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find(" request path=\"/a\\nI forged b=c\" plain=/v1/models"),
            std::string::npos)
      << lines_[0];
}

TEST_F(LogTest, JsonLinesForEveryMessage) {
  SetLogFormat(LogFormat::kJson);
  LogError("bad \"thing\"\n");
  LogEvent(LogLevel::kInfo, "request", {{"path", "/v1/models"}, {"status", 404}, {"ms", 0.25}});
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_TRUE(std::regex_match(
      lines_[0], std::regex(R"(\{"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","level":"error",)"
                            R"("msg":"bad \\"thing\\"\\n"\})")))
      << lines_[0];
  EXPECT_NE(lines_[1].find(R"("level":"info","msg":"request","path":"/v1/models","status":404,)"
                           R"("ms":0.2})"),
            std::string::npos)
      << lines_[1];
}

TEST_F(LogTest, JsonLinesStayValidForAnyBytes) {
  SetLogFormat(LogFormat::kJson);
  LogEvent(LogLevel::kInfo, "request", {{"path", "/caf\xc3\xa9/\xff\xe4\xb8/\x01"}});
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find("\"path\":\"/caf\xc3\xa9/\\ufffd\\ufffd\\ufffd/\\u0001\""),
            std::string::npos)
      << lines_[0];
}

TEST_F(LogTest, BelowTheThresholdNothingIsWritten) {
  SetLogLevel(LogLevel::kWarn);
  LogInfo("hidden");
  LogEvent(LogLevel::kInfo, "hidden", {});
  SetLogLevel(LogLevel::kInfo);
  EXPECT_TRUE(lines_.empty());
}

}  // namespace
}  // namespace qvl
