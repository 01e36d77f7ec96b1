// Minimal leveled logging to stderr: "2026-11-30 13:21:58.123 I message".
// QVL_LOG_LEVEL=debug|info|warn|error sets the threshold (default info).
#pragma once

#include <string>

#include "base/error.h"

namespace qvl {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

void LogMessage(LogLevel level, const std::string& message);
bool LogEnabled(LogLevel level);
void SetLogLevel(LogLevel level);

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
