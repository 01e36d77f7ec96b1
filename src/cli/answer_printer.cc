#include "cli/answer_printer.h"

#include <unistd.h>

#include <array>
#include <csignal>
#include <string>

namespace qvl::cli {
namespace {

constexpr std::string_view kDim = "\x1b[2m";
constexpr std::string_view kNormal = "\x1b[0m";

// Ctrl-C (or a kill) while dim reasoning streams would leave the shell's prompt dim: the
// handler puts the terminal back and then dies of the signal as before.
volatile std::sig_atomic_t g_dim_fd = -1;
constexpr std::array<int, 3> kResetSignals = {SIGINT, SIGTERM, SIGHUP};
// The handlers that dim reasoning replaced, put back when it closes (one terminal, so
// one dim printer at a time).
std::array<void (*)(int), kResetSignals.size()> g_previous_handlers{};

extern "C" void ResetTerminalAndDie(int signal) {
  if (g_dim_fd >= 0) {
    [[maybe_unused]] const ssize_t ignored = ::write(g_dim_fd, kNormal.data(), kNormal.size());
  }
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void Put(std::FILE* file, std::string_view text) { std::fwrite(text.data(), 1, text.size(), file); }

}  // namespace

AnswerPrinter::AnswerPrinter(const AnswerPrinterOptions& options, std::FILE* out, std::FILE* status)
    : options_(options), out_(out), status_(status) {}

void AnswerPrinter::Print(std::string_view text) {
  if (!options_.split_reasoning) {
    Put(out_, text);
    std::fflush(out_);
    return;
  }
  ReasoningSplitter::Output parts;
  splitter_.Feed(text, &parts);
  Write(parts);
}

void AnswerPrinter::Finish() {
  if (!options_.split_reasoning) return;
  ReasoningSplitter::Output parts;
  splitter_.Finish(&parts);
  Write(parts);
  CloseReasoning();
}

void AnswerPrinter::Write(const ReasoningSplitter::Output& parts) {
  if (!parts.reasoning.empty()) {
    OpenReasoning();
    if (!options_.hide_reasoning) Put(out_, parts.reasoning);
  }
  if (splitter_.answering()) CloseReasoning();
  Put(out_, parts.content);
  std::fflush(out_);
}

void AnswerPrinter::OpenReasoning() {
  if (reasoning_open_) return;
  reasoning_open_ = true;
  if (options_.hide_reasoning) {
    if (status_ == nullptr) return;
    Put(status_, std::string(kThinkingOpens) + "\n");
    std::fflush(status_);
    return;
  }
  if (options_.dim_reasoning) {
    g_dim_fd = ::fileno(out_);
    for (size_t i = 0; i < kResetSignals.size(); ++i) {
      g_previous_handlers[i] = std::signal(kResetSignals[i], ResetTerminalAndDie);
    }
    Put(out_, kDim);
  }
  Put(out_, std::string(kThinkingOpens) + "\n");
}

// The reasoning has no newline at its end (the splitter drops them): the mark takes a line
// of its own, and a blank line parts it from the reply.
void AnswerPrinter::CloseReasoning() {
  if (!reasoning_open_) return;
  reasoning_open_ = false;
  if (options_.hide_reasoning) {
    if (status_ == nullptr) return;
    Put(status_, std::string(kThinkingCloses) + "\n");
    std::fflush(status_);
    return;
  }
  Put(out_, "\n" + std::string(kThinkingCloses));
  if (options_.dim_reasoning) {
    Put(out_, kNormal);
    std::fflush(out_);
    for (size_t i = 0; i < kResetSignals.size(); ++i) {
      std::signal(kResetSignals[i], g_previous_handlers[i]);
    }
    g_dim_fd = -1;
  }
  Put(out_, "\n\n");
}

}  // namespace qvl::cli
