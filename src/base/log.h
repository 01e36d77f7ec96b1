// Minimal leveled logging to stderr, one line per message, as text
// ("2026-11-30 13:21:58.123 I message key=value") or as one JSON object per line
// ({"time":"2026-11-30T12:21:58.123Z","level":"info","msg":"message","key":value}).
// QVL_LOG_LEVEL=debug|info|warn|error sets the threshold (default info).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace qvl {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
enum class LogFormat { kText, kJson };

// A named value of a structured log line: a string, or a number written as is.
struct LogField {
  LogField(std::string_view k, std::string_view v) : key(k), value(v), quoted(true) {}
  LogField(std::string_view k, const char* v) : LogField(k, std::string_view(v)) {}
  LogField(std::string_view k, int64_t v) : key(k), value(std::to_string(v)), quoted(false) {}
  LogField(std::string_view k, int v) : LogField(k, static_cast<int64_t>(v)) {}
  // Milliseconds and the like: one decimal.
  LogField(std::string_view k, double v);

  std::string_view key;
  std::string value;
  bool quoted;
};

void LogMessage(LogLevel level, const std::string& message);
// `message` followed by `fields`: key=value in text (strings quoted when they hold a
// space or a quote), members of the line's object in JSON.
void LogEvent(LogLevel level, std::string_view message, const std::vector<LogField>& fields);
bool LogEnabled(LogLevel level);
void SetLogLevel(LogLevel level);
void SetLogFormat(LogFormat format);
LogFormat GetLogFormat();

// Where finished lines go (without their newline) instead of stderr; an empty function
// restores stderr. Lets tests read what was logged.
using LogSink = std::function<void(const std::string& line)>;
void SetLogSink(LogSink sink);

template <typename... Args>
void LogDebug(Args&&... args) {
  if (LogEnabled(LogLevel::kDebug)) LogMessage(LogLevel::kDebug, StrCat(args...));
}
template <typename... Args>
void LogInfo(Args&&... args) {
  if (LogEnabled(LogLevel::kInfo)) LogMessage(LogLevel::kInfo, StrCat(args...));
}
template <typename... Args>
void LogWarn(Args&&... args) {
  if (LogEnabled(LogLevel::kWarn)) LogMessage(LogLevel::kWarn, StrCat(args...));
}
template <typename... Args>
void LogError(Args&&... args) {
  LogMessage(LogLevel::kError, StrCat(args...));
}

}  // namespace qvl
