// One answer of `qvl run` in the terminal: submitted to the engine, streamed to stdout as
// it comes (or gathered into the server's JSON response with --json), stoppable, and
// followed by the timing line on stderr.
#pragma once

#include <functional>
#include <string>

#include "engine/engine.h"

namespace qvl::cli {

struct AnswerDisplay {
  std::string model;  // the model's name in --json output
  bool json = false;
  bool quiet = false;  // no timing line (nor the marks of hidden reasoning)
  bool hide_thinking = false;
  double load_ms = -1;  // shown first in the timing line; negative: not shown
};

struct TerminalAnswer {
  GenerationUpdate last;  // the first answer's final update
  std::string text;       // its whole text, reasoning included, as the model wrote it
};

// Runs `request` and waits for all of its answers; only the first is shown. While it runs,
// `stop_requested` is asked every few tens of milliseconds; once it says true the answer is
// cancelled (finish reason kCancelled, the text so far kept). Throws what Submit throws
// for a request it refuses; an answer that fails is returned with its error, not thrown.
TerminalAnswer AnswerInTerminal(Engine& engine, GenerationRequest request,
                                const AnswerDisplay& display,
                                const std::function<bool()>& stop_requested);

// The "[load ... | prompt ... | ...]" line and one line per image and video, on stderr.
void PrintTimings(const GenerationUpdate& last, bool thinking, double load_ms);

}  // namespace qvl::cli
