#include "cli/chat_repl.h"

#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "base/error.h"
#include "cli/chat_input.h"
#include "cli/media_files.h"

namespace qvl::cli {
namespace {

sigset_t Interrupts() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  return set;
}

bool IsReadableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), R_OK) == 0;
}

void Say(const char* text) {
  std::fputs(text, stdout);
  std::fflush(stdout);
}

// Reads the files an entry names; an unreadable one is reported and left out.
bool ReadAttachments(const ChatInput& in, const EngineOptions& options,
                     std::vector<ChatAttachment>* media) {
  bool all = true;
  for (const bool video : {false, true}) {
    for (const std::string& path : video ? in.videos : in.images) {
      try {
        std::string bytes =
            video ? ReadVideoFile("/video", path, options) : ReadImageFile("/image", path, options);
        media->push_back({path, std::move(bytes), video});
        std::printf("Added %s '%s'\n", video ? "video" : "image", path.c_str());
      } catch (const Error& e) {
        std::printf("qvl: error: %s\n", e.what());
        all = false;
      }
    }
  }
  std::fflush(stdout);
  return all;
}

}  // namespace

void ChatConversation::SetSystem(std::string system) {
  system_ = std::move(system);
  turns_.clear();
}

GenerationRequest ChatConversation::Ask(const std::string& question,
                                        const std::vector<ChatAttachment>& media) const {
  GenerationRequest r;
  if (!system_.empty())
    r.messages.push_back({"system", {{ChatPart::Kind::kText, system_}}, true, {}, {}});
  const auto add_user = [&r](const std::string& text, const std::vector<ChatAttachment>& files) {
    ChatMessage user{"user", {}, false, {}, {}};
    for (const ChatAttachment& a : files) {
      if (a.video) {
        VideoInput video;
        video.name = a.path;
        video.file.assign(a.bytes.begin(), a.bytes.end());
        r.videos.push_back(std::move(video));
        user.parts.push_back({ChatPart::Kind::kVideo, ""});
      } else {
        r.images.push_back({a.path, {a.bytes.begin(), a.bytes.end()}, "", ImageDetail::kAuto});
        user.parts.push_back({ChatPart::Kind::kImage, ""});
      }
    }
    user.parts.push_back({ChatPart::Kind::kText, text});
    r.messages.push_back(std::move(user));
  };
  for (const Turn& t : turns_) {
    add_user(t.question, t.media);
    r.messages.push_back({"assistant", {{ChatPart::Kind::kText, t.answer}}, true, {}, {}});
  }
  add_user(question, media);
  return r;
}

void ChatConversation::Add(std::string question, std::vector<ChatAttachment> media,
                           std::string answer) {
  turns_.push_back({std::move(question), std::move(media), std::move(answer)});
}

void KeepInterruptsForChat() {
  const sigset_t interrupts = Interrupts();
  pthread_sigmask(SIG_BLOCK, &interrupts, nullptr);
}

void RunChat(Engine& engine, const ChatOptions& options) {
  // SIGINT stays blocked in every thread and is read from a descriptor: the wait for a
  // line and the answer's loop both see each Ctrl+C, whenever it comes.
  const sigset_t interrupts = Interrupts();
  const int interrupt_fd = ::signalfd(-1, &interrupts, SFD_NONBLOCK | SFD_CLOEXEC);
  if (interrupt_fd < 0) Fail(ErrorCode::kInternal, "signalfd: cannot watch for Ctrl+C");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{interrupt_fd};
  const auto interrupted = [interrupt_fd] {
    signalfd_siginfo info;
    bool any = false;
    while (::read(interrupt_fd, &info, sizeof(info)) == sizeof(info)) any = true;
    return any;
  };
  std::fprintf(stderr,
               "Ask about an image: put its path in a question, or /image PATH. Follow-ups "
               "keep the conversation. /? for help, /bye or Ctrl+D to leave.\n");
  ChatConversation conversation;
  conversation.SetSystem(options.system);
  std::vector<ChatAttachment> pending = options.media;
  AnswerDisplay display = options.display;
  LineReader lines(STDIN_FILENO, interrupt_fd);
  for (;;) {
    // A Ctrl+C from here on is about this question: typed at the prompt, it empties the
    // line; pressed once the question is sent, it stops the answer.
    interrupted();
    Say(">>> ");
    std::string entry;
    const LineReader::Status status = ReadChatEntry(
        lines, [] { Say("... "); }, &entry);
    if (status == LineReader::Status::kInterrupted) {
      Say("\nUse Ctrl + d or /bye to exit.\n");
      continue;
    }
    if (status == LineReader::Status::kEnd) {
      Say("\n");
      return;
    }
    const ChatInput in = ParseChatInput(entry, IsReadableFile);
    switch (in.kind) {
      case ChatInput::Kind::kEmpty:
        continue;
      case ChatInput::Kind::kBye:
        return;
      case ChatInput::Kind::kHelp:
        Say(kChatHelp);
        continue;
      case ChatInput::Kind::kClear:
        conversation.Clear();
        pending.clear();
        Say("Cleared the conversation.\n");
        continue;
      case ChatInput::Kind::kSystem:
        conversation.SetSystem(in.text);
        pending.clear();
        Say(in.text.empty() ? "No system message; a new conversation starts.\n"
                            : "Set the system message; a new conversation starts.\n");
        continue;
      case ChatInput::Kind::kUnknown:
        std::printf("Unknown command '%s'. Type /? for help\n", in.text.c_str());
        std::fflush(stdout);
        continue;
      case ChatInput::Kind::kAttach:
        if (in.images.empty() && in.videos.empty()) {
          Say("Give the path of a file: /image PATH or /video PATH\n");
        } else {
          ReadAttachments(in, engine.options(), &pending);
        }
        continue;
      case ChatInput::Kind::kQuestion:
        break;
    }
    // A file that could not be read leaves the question unasked, to be asked again.
    if (!ReadAttachments(in, engine.options(), &pending)) continue;
    GenerationRequest request = conversation.Ask(in.text, pending);
    if (options.apply_flags) options.apply_flags(&request);
    TerminalAnswer answer;
    try {
      answer = AnswerInTerminal(engine, std::move(request), display, interrupted);
    } catch (const Error& e) {
      std::printf(
          "qvl: error: %s%s\n", e.what(),
          e.code() == ErrorCode::kContextLength ? " (/clear starts a new conversation)" : "");
      std::fflush(stdout);
      pending.clear();
      continue;
    }
    if (answer.last.finish_reason == FinishReason::kError) {
      std::printf("qvl: error: %s\n", answer.last.error.c_str());
      std::fflush(stdout);
      pending.clear();
      continue;
    }
    display.load_ms = -1;
    // A stopped answer stays as far as it went, as the person saw it.
    if (!answer.text.empty()) conversation.Add(in.text, std::move(pending), std::move(answer.text));
    pending.clear();
  }
}

}  // namespace qvl::cli
