#include "base/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

namespace qvl {
namespace {

LogLevel LevelFromEnv() {
  const char* env = std::getenv("QVL_LOG_LEVEL");
  if (env == nullptr) return LogLevel::kInfo;
  if (std::strcmp(env, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(env, "warn") == 0) return LogLevel::kWarn;
  if (std::strcmp(env, "error") == 0) return LogLevel::kError;
  return LogLevel::kInfo;
}

std::atomic<int>& Threshold() {
  static std::atomic<int> level{static_cast<int>(LevelFromEnv())};
  return level;
}

}  // namespace

bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) >= Threshold().load(std::memory_order_relaxed);
}

void SetLogLevel(LogLevel level) { Threshold().store(static_cast<int>(level)); }

void LogMessage(LogLevel level, const std::string& message) {
  static std::mutex mu;
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const int millis = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm;
  localtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
  static const char kLetters[] = {'D', 'I', 'W', 'E'};
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "%s.%03d %c %s\n", stamp, millis, kLetters[static_cast<int>(level)],
               message.c_str());
}

}  // namespace qvl
