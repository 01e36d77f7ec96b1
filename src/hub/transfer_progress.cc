#include "hub/transfer_progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "base/log.h"

namespace qvl::hub {
namespace {

constexpr std::chrono::milliseconds kBarInterval{200};
constexpr std::chrono::seconds kLogInterval{10};
constexpr std::chrono::seconds kSpeedWindow{5};

int TerminalWidth() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20) return size.ws_col;
  return 100;
}

}  // namespace

ProgressStyle DefaultProgressStyle() {
  return isatty(STDERR_FILENO) ? ProgressStyle::kBar : ProgressStyle::kLog;
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 99 * 3600) return "--:--";
  const long total = std::lround(seconds);
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof(text), "%ld:%02ld:%02ld", total / 3600, total / 60 % 60, total % 60);
  } else {
    std::snprintf(text, sizeof(text), "%ld:%02ld", total / 60, total % 60);
  }
  return text;
}

std::string FormatBytes(double bytes) {
  static const char* kUnits[] = {"B", "kB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 4) {
    bytes /= 1000;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof(text), "%.0f B", bytes);
  } else {
    std::snprintf(text, sizeof(text),
                  bytes < 10    ? "%.2f %s"
                  : bytes < 100 ? "%.1f %s"
                                : "%.0f %s",
                  bytes, kUnits[unit]);
  }
  return text;
}

TransferProgress::TransferProgress(ProgressStyle style, std::string title, uint64_t total_bytes,
                                   uint64_t resumed_bytes, int total_files)
    : style_(style),
      title_(std::move(title)),
      total_bytes_(total_bytes),
      resumed_bytes_(resumed_bytes),
      total_files_(total_files) {
  if (style_ == ProgressStyle::kQuiet) return;
  if (style_ == ProgressStyle::kLog) {
    LogInfo("downloading ", title_, ": ", total_files_, " files, ",
            FormatBytes(static_cast<double>(total_bytes_ - resumed_bytes_)), " to fetch",
            resumed_bytes_ > 0 ? StrCat(" (", FormatBytes(resumed_bytes_), " already on disk)")
                               : std::string());
  }
  ticker_ = std::thread([this] { Run(); });
}

TransferProgress::~TransferProgress() {
  try {
    Stop();
  } catch (...) {
    // Runs while an error unwinds: the error is what the user must see.
  }
}

void TransferProgress::Add(int64_t bytes) { received_.fetch_add(bytes); }

void TransferProgress::FileDone(const std::string& name, uint64_t size) {
  files_done_.fetch_add(1);
  if (style_ == ProgressStyle::kLog) {
    LogInfo("fetched ", name, " (", FormatBytes(static_cast<double>(size)), ")");
  }
}

void TransferProgress::Note(const std::string& message) {
  if (style_ == ProgressStyle::kBar) {
    std::lock_guard<std::mutex> lock(mu_);
    std::fprintf(stderr, "\r\033[K");
    LogWarn(message);
    std::fputs(Line(false).c_str(), stderr);
    std::fflush(stderr);
  } else {
    LogWarn(message);
  }
}

bool TransferProgress::EndTicker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return false;
    finished_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  return true;
}

void TransferProgress::Finish() {
  if (EndTicker() && style_ == ProgressStyle::kBar) Draw(true);
}

void TransferProgress::Stop() {
  if (!EndTicker() || style_ == ProgressStyle::kQuiet) return;
  if (style_ == ProgressStyle::kBar) {
    std::lock_guard<std::mutex> lock(mu_);
    std::fputs(Line(false).c_str(), stderr);
    std::fputc('\n', stderr);
    std::fflush(stderr);
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  LogWarn("pull of ", title_, " stopped, incomplete: fetched ",
          FormatBytes(static_cast<double>(received_.load())), " of ",
          FormatBytes(static_cast<double>(total_bytes_ - resumed_bytes_)), " in ",
          FormatDuration(elapsed), ", ", files_done_.load(), " of ", total_files_, " files");
}

void TransferProgress::Run() {
  const auto interval = style_ == ProgressStyle::kBar
                            ? std::chrono::duration_cast<Clock::duration>(kBarInterval)
                            : std::chrono::duration_cast<Clock::duration>(kLogInterval);
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, interval, [this] { return finished_; })) {
    lock.unlock();
    Draw(false);
    lock.lock();
  }
}

std::string TransferProgress::Line(bool final) {
  const auto now = Clock::now();
  const int64_t received = received_.load();
  samples_.emplace_back(now, received);
  while (samples_.size() > 2 && now - samples_.front().first > kSpeedWindow) samples_.pop_front();
  const double window = std::chrono::duration<double>(now - samples_.front().first).count();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double speed = final          ? (elapsed > 0 ? received / elapsed : 0)
                       : window > 0.2 ? (received - samples_.front().second) / window
                                      : 0;
  const double done = static_cast<double>(resumed_bytes_) + static_cast<double>(received);
  const double total = static_cast<double>(total_bytes_);
  const double fraction = total > 0 ? std::min(1.0, done / total) : 1.0;
  const std::string sizes = StrCat(FormatBytes(done), " / ", FormatBytes(total));
  const std::string rate = StrCat(FormatBytes(speed), "/s");
  const std::string files = StrCat(files_done_.load(), "/", total_files_, " files");
  if (style_ == ProgressStyle::kLog) {
    return StrCat("downloading ", title_, ": ", sizes, " (", std::lround(fraction * 100), "%), ",
                  rate, ", ETA ", FormatDuration((total - done) / speed), ", ", files);
  }
  const std::string eta =
      final ? FormatDuration(elapsed) : "ETA " + FormatDuration((total - done) / speed);
  const std::string tail =
      StrCat(" ", std::lround(fraction * 100), "% ", sizes, "  ", rate, "  ", eta, "  ", files);
  const int width = TerminalWidth() - 1;
  const int bar_width =
      std::max(10, std::min(30, width - static_cast<int>(title_.size() + tail.size()) - 3));
  const int filled = static_cast<int>(fraction * bar_width);
  std::string line =
      StrCat("\r\033[K", title_, " [", std::string(filled, '='), filled < bar_width ? ">" : "",
             std::string(std::max(0, bar_width - filled - 1), ' '), "]", tail);
  return line.size() > static_cast<size_t>(width) + 4 ? line.substr(0, width + 4) : line;
}

void TransferProgress::Draw(bool final) {
  std::lock_guard<std::mutex> lock(mu_);
  if (style_ == ProgressStyle::kLog) {
    LogInfo(Line(final));
    return;
  }
  std::fputs(Line(final).c_str(), stderr);
  if (final) std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace qvl::hub
