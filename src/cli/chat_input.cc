#include "cli/chat_input.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <span>

#include "base/trim_space.h"

namespace qvl::cli {
namespace {

constexpr std::string_view kBlockQuote = "\"\"\"";

// The extensions a question's words are looked at for (a file's bytes decide how it is
// decoded; the extension only says which words are meant as files).
constexpr std::array<std::string_view, 7> kImageExtensions = {".jpg", ".jpeg", ".png", ".webp",
                                                              ".gif", ".bmp",  ".jfif"};
constexpr std::array<std::string_view, 8> kVideoExtensions = {".mp4", ".webm", ".mov", ".mkv",
                                                              ".avi", ".m4v",  ".mpg", ".mpeg"};

bool EndsWithAny(std::string_view path, std::span<const std::string_view> extensions) {
  std::string lower(path);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::any_of(extensions.begin(), extensions.end(),
                     [&](std::string_view e) { return lower.ends_with(e); });
}

std::string ExpandHome(std::string path) {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return path;
  if (path == "~") return home;
  if (path.starts_with("~/")) return std::string(home) + path.substr(1);
  return path;
}

// A word of an entry: where it is and what it says once its quotes ('...' or "...") or
// backslash escapes (a terminal's drag and drop writes "my\ photo.jpg") are undone.
struct Word {
  size_t begin, end;
  std::string value;
};

std::vector<Word> SplitWords(std::string_view s) {
  std::vector<Word> words;
  size_t i = 0;
  while (i < s.size()) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) {
      ++i;
      continue;
    }
    Word w{i, i, ""};
    if (s[i] == '\'' || s[i] == '"') {
      const size_t close = s.find(s[i], i + 1);
      if (close != std::string_view::npos) {
        w.value = std::string(s.substr(i + 1, close - i - 1));
        w.end = close + 1;
        words.push_back(std::move(w));
        i = close + 1;
        continue;
      }
    }
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) {
      if (s[i] == '\\' && i + 1 < s.size()) ++i;
      w.value += s[i++];
    }
    w.end = i;
    words.push_back(std::move(w));
  }
  return words;
}

// `text` without the spans of `taken` (in order), one space kept where a word left two.
std::string WithoutWords(std::string_view text, const std::vector<Word>& taken) {
  std::string out;
  size_t at = 0;
  for (const Word& w : taken) {
    out += text.substr(at, w.begin - at);
    at = w.end;
    if (!out.empty() && std::isspace(static_cast<unsigned char>(out.back())) && at < text.size() &&
        std::isspace(static_cast<unsigned char>(text[at]))) {
      ++at;
    }
  }
  out += text.substr(at);
  return std::string(TrimSpace(out));
}

}  // namespace

const char kChatHelp[] =
    "  /image PATH...   attach images to the next question (or put their paths in it)\n"
    "  /video PATH...   attach videos to the next question\n"
    "  /system TEXT     set the system message and start a new conversation\n"
    "  /clear           start a new conversation\n"
    "  /bye             leave (or Ctrl+D)\n"
    "  /?, /help        this help\n"
    "A question of several lines goes between \"\"\" and \"\"\". Ctrl+C stops an answer.\n";

LineReader::Status LineReader::Next(std::string* line) {
  for (;;) {
    const size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      *line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      if (!line->empty() && line->back() == '\r') line->pop_back();
      return Status::kLine;
    }
    if (eof_) {
      if (pending_.empty()) return Status::kEnd;
      *line = std::move(pending_);
      pending_.clear();
      return Status::kLine;
    }
    if (interrupt_fd_ >= 0) {
      pollfd fds[2] = {{fd_, POLLIN, 0}, {interrupt_fd_, POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        eof_ = true;
        continue;
      }
      if (fds[1].revents & POLLIN) {
        signalfd_siginfo info;
        while (::read(interrupt_fd_, &info, sizeof(info)) == sizeof(info)) {
        }
        pending_.clear();
        return Status::kInterrupted;
      }
    }
    char buffer[4096];
    const ssize_t n = ::read(fd_, buffer, sizeof(buffer));
    if (n > 0) {
      pending_.append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      eof_ = true;
    }
  }
}

LineReader::Status ReadChatEntry(LineReader& lines, const std::function<void()>& more,
                                 std::string* entry) {
  std::string line;
  LineReader::Status status = lines.Next(&line);
  if (status != LineReader::Status::kLine) return status;
  const std::string_view first = TrimSpace(line);
  if (!first.starts_with(kBlockQuote)) {
    *entry = line;
    return status;
  }
  std::string block(first.substr(kBlockQuote.size()));
  if (block.size() >= kBlockQuote.size() && block.ends_with(kBlockQuote)) {
    *entry = block.substr(0, block.size() - kBlockQuote.size());
    return status;
  }
  for (;;) {
    if (more) more();
    status = lines.Next(&line);
    if (status == LineReader::Status::kInterrupted) return status;
    if (status == LineReader::Status::kEnd) break;
    const std::string_view trimmed = TrimSpace(line);
    const bool closes = trimmed.ends_with(kBlockQuote);
    const std::string_view text =
        closes ? std::string_view(line).substr(0, line.rfind(kBlockQuote)) : line;
    if (closes && TrimSpace(text).empty()) break;
    if (!block.empty()) block += '\n';
    block += text;
    if (closes) break;
  }
  *entry = std::move(block);
  return LineReader::Status::kLine;
}

ChatInput ParseChatInput(std::string_view entry,
                         const std::function<bool(const std::string&)>& is_file) {
  ChatInput in;
  const std::string_view text = TrimSpace(entry);
  if (text.empty()) return in;
  const std::vector<Word> words = SplitWords(text);
  const auto is_media = [&](const std::string& path) {
    return (EndsWithAny(path, kImageExtensions) || EndsWithAny(path, kVideoExtensions)) &&
           is_file(path);
  };
  // A question may start with a file's path, which starts with "/" too.
  if (text.front() == '/' && !is_media(ExpandHome(words.front().value))) {
    const std::string command = words.front().value;
    const std::string rest(TrimSpace(text.substr(words.front().end)));
    if (command == "/bye" || command == "/exit" || command == "/quit") {
      in.kind = ChatInput::Kind::kBye;
    } else if (command == "/clear") {
      in.kind = ChatInput::Kind::kClear;
    } else if (command == "/?" || command == "/help") {
      in.kind = ChatInput::Kind::kHelp;
    } else if (command == "/system") {
      in.kind = ChatInput::Kind::kSystem;
      in.text = rest;
    } else if (command == "/image" || command == "/video") {
      in.kind = ChatInput::Kind::kAttach;
      for (size_t i = 1; i < words.size(); ++i) {
        (command == "/image" ? in.images : in.videos).push_back(ExpandHome(words[i].value));
      }
    } else {
      in.kind = ChatInput::Kind::kUnknown;
      in.text = command;
    }
    return in;
  }
  std::vector<Word> taken;
  for (const Word& w : words) {
    const std::string path = ExpandHome(w.value);
    if (!is_media(path)) continue;
    (EndsWithAny(path, kImageExtensions) ? in.images : in.videos).push_back(path);
    taken.push_back(w);
  }
  in.text = WithoutWords(text, taken);
  in.kind = in.text.empty() ? ChatInput::Kind::kAttach : ChatInput::Kind::kQuestion;
  return in;
}

}  // namespace qvl::cli
