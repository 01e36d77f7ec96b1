// How `qvl run` streams an answer to the terminal. An Instruct model's text is written as
// it comes. A Thinking model's reasoning is written between a "Thinking..." line and a
// "...done thinking." line, as `ollama run` shows it, and then the reply; or, hidden,
// only the reply, with the two marks on the status stream instead.
#pragma once

#include <cstdio>
#include <string_view>

#include "text/reasoning_split.h"

namespace qvl::cli {

// Ollama's marks, so that a reader (or a script) of both finds the reasoning the same way.
inline constexpr std::string_view kThinkingOpens = "Thinking...";
inline constexpr std::string_view kThinkingCloses = "...done thinking.";

struct AnswerPrinterOptions {
  bool split_reasoning = false;  // a Thinking model's answer (SplitsReasoning)
  bool hide_reasoning = false;
  bool dim_reasoning = false;  // ANSI dim for the reasoning and its marks: a terminal only
};

// Thread-compatible: one thread feeds it (the engine's callback), then another calls
// Finish once the callback is done.
class AnswerPrinter {
 public:
  // `status` (nullptr for none) takes the marks of hidden reasoning.
  AnswerPrinter(const AnswerPrinterOptions& options, std::FILE* out, std::FILE* status);

  // Writes what `text`, the next piece of the answer, makes certain, and flushes.
  void Print(std::string_view text);
  // The answer is complete: writes what was held back and closes open reasoning.
  void Finish();
  // Whether all of the answer so far is reasoning: a Thinking model's, before "</think>".
  bool still_reasoning() const { return options_.split_reasoning && !splitter_.answering(); }

 private:
  void Write(const ReasoningSplitter::Output& parts);
  void OpenReasoning();
  void CloseReasoning();

  AnswerPrinterOptions options_;
  std::FILE* out_;
  std::FILE* status_;
  ReasoningSplitter splitter_;
  bool reasoning_open_ = false;  // "Thinking..." written, "...done thinking." not yet
};

}  // namespace qvl::cli
