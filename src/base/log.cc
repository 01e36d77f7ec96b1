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

std::atomic<LogFormat> g_format{LogFormat::kText};

// The sink and the order of lines from different threads.
std::mutex& OutputMutex() {
  static std::mutex mu;
  return mu;
}
LogSink& Sink() {
  static LogSink sink;
  return sink;
}

// The length of the well-formed UTF-8 sequence at text[i] (a byte >= 0x80), 0 if none.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

// A JSON string; bytes that are not UTF-8 (a client's path may hold any) become U+FFFD.
void AppendJsonString(std::string_view text, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      const size_t length = Utf8SequenceLength(text, i);
      if (length == 0) {
        *out += "\\ufffd";
      } else {
        out->append(text.substr(i, length));
        i += length - 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
          *out += escaped;
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// Quoted (and escaped) when it could be misread: a client-chosen path with a space or
// a newline must not make two fields, or two lines.
bool NeedsQuotes(std::string_view value) {
  if (value.empty()) return true;
  for (const char c : value) {
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      return true;
    }
  }
  return false;
}

std::string FormatLine(LogLevel level, std::string_view message,
                       const std::vector<LogField>& fields) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const int millis = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm;
  char stamp[40];
  std::string line;
  if (g_format.load(std::memory_order_relaxed) == LogFormat::kJson) {
    static const char* const kNames[] = {"debug", "info", "warn", "error"};
    gmtime_r(&secs, &tm);
    std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
    line = StrCat("{\"time\":\"", stamp, ".", millis / 100, (millis / 10) % 10, millis % 10,
                  "Z\",\"level\":\"", kNames[static_cast<int>(level)], "\",\"msg\":");
    AppendJsonString(message, &line);
    for (const LogField& field : fields) {
      line.push_back(',');
      AppendJsonString(field.key, &line);
      line.push_back(':');
      if (field.quoted) {
        AppendJsonString(field.value, &line);
      } else {
        line += field.value;
      }
    }
    line.push_back('}');
    return line;
  }
  static const char kLetters[] = {'D', 'I', 'W', 'E'};
  localtime_r(&secs, &tm);
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
  char head[64];
  std::snprintf(head, sizeof(head), "%s.%03d %c ", stamp, millis,
                kLetters[static_cast<int>(level)]);
  line = StrCat(head, message);
  for (const LogField& field : fields) {
    line += StrCat(" ", field.key, "=");
    if (field.quoted && NeedsQuotes(field.value)) {
      AppendJsonString(field.value, &line);
    } else {
      line += field.value;
    }
  }
  return line;
}

void Write(const std::string& line) {
  std::lock_guard<std::mutex> lock(OutputMutex());
  if (Sink()) {
    Sink()(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

}  // namespace

LogField::LogField(std::string_view k, double v) : key(k), quoted(false) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", v);
  value = text;
}

bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) >= Threshold().load(std::memory_order_relaxed);
}

void SetLogLevel(LogLevel level) { Threshold().store(static_cast<int>(level)); }

void SetLogFormat(LogFormat format) { g_format.store(format); }

LogFormat GetLogFormat() { return g_format.load(); }

void SetLogSink(LogSink sink) {
  std::lock_guard<std::mutex> lock(OutputMutex());
  Sink() = std::move(sink);
}

void LogMessage(LogLevel level, const std::string& message) {
  Write(FormatLine(level, message, {}));
}

void LogEvent(LogLevel level, std::string_view message, const std::vector<LogField>& fields) {
  if (!LogEnabled(level)) return;
  Write(FormatLine(level, message, fields));
}

}  // namespace qvl
