// What a person types at `qvl run`'s chat prompt, read and understood: lines from the
// terminal (a question over several lines between """ and """, as `ollama run` takes
// it), commands (/image, /clear, /bye, ...), and the image and video paths inside a
// question (dragged into a terminal, a file's path arrives quoted or with its spaces
// escaped), which become attachments.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace qvl::cli {

// Lines from a file descriptor, read as they come.
class LineReader {
 public:
  enum class Status { kLine, kEnd, kInterrupted };

  // `interrupt_fd` (-1: none), a signalfd, interrupts the wait for a line when it becomes
  // readable; a signal is then never lost between a check and the wait.
  explicit LineReader(int fd, int interrupt_fd = -1) : fd_(fd), interrupt_fd_(interrupt_fd) {}
  // The next line without its "\n" (a last line without one counts); kInterrupted when
  // the interrupt came first (its signal consumed; what was typed so far is dropped, as a
  // terminal does).
  Status Next(std::string* line);

 private:
  int fd_;
  int interrupt_fd_;
  std::string pending_;
  bool eof_ = false;
};

// One entry: a line, or a block from a line starting with """ to a line ending with """
// (the quotes removed, the lines joined by "\n"). `more` is called before each further
// line of a block (to show a continuation prompt). Status as LineReader's; at kEnd inside
// a block, the block so far is the entry.
LineReader::Status ReadChatEntry(LineReader& lines, const std::function<void()>& more,
                                 std::string* entry);

struct ChatInput {
  enum class Kind { kEmpty, kQuestion, kAttach, kSystem, kClear, kHelp, kBye, kUnknown };
  Kind kind = Kind::kEmpty;
  // The question with its attached paths taken out; the system message; or, for
  // kUnknown, the command as typed.
  std::string text;
  std::vector<std::string> images, videos;  // paths, "~/" expanded
};

// Understands one entry. `is_file` says whether a path names a readable file: only those
// words of a question that do, with an image or video extension, are attachments.
ChatInput ParseChatInput(std::string_view entry,
                         const std::function<bool(const std::string&)>& is_file);

// The commands, for /? and /help.
extern const char kChatHelp[];

}  // namespace qvl::cli
