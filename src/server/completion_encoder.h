// Turns the engine's updates for one request into the bytes of the HTTP response: a
// server-sent event stream in OpenAI's chunk format, or one JSON completion at the end.
// A request with n choices gets updates of each choice interleaved; the response is
// complete when every choice has finished. With tools offered, each choice's text goes
// through a ToolCallParser: calls become `tool_calls` and finish_reason "tool_calls".
#pragma once

#include <string>
#include <vector>

#include "engine/request.h"
#include "server/openai_format.h"
#include "server/tool_call_parser.h"

namespace qvl {

struct EncoderOptions {
  bool stream = false;
  bool include_usage = false;
  bool logprobs = false;
  int choices = 1;
  bool parse_tool_calls = false;
};

class CompletionEncoder {
 public:
  CompletionEncoder(CompletionIdentity identity, const EncoderOptions& options);

  // What to send before any update: the stream's role chunks; "" when not streaming.
  std::string Start();
  // What to send for `update` (may be ""). After the final update of the last choice the
  // response is complete: streams end with "data: [DONE]".
  std::string Encode(GenerationUpdate&& update);
  bool finished() const { return finished_; }
  // Once finished: the request as a whole — usage summed over the choices (the prompt
  // once), the first choice's timings and finish reason — for metrics and logs.
  const GenerationUpdate& summary() const { return summary_; }

 private:
  struct Choice {
    std::string text;                    // non-streamed: the whole answer
    std::vector<GeneratedToken> tokens;  // non-streamed with logprobs
    ToolCallParser tools;
    std::vector<ParsedToolCall> calls;  // non-streamed
    bool finished = false;
    FinishReason reason = FinishReason::kNone;
  };

  std::string EncodeStreamed(Choice& choice, GenerationUpdate&& update);
  void Accumulate(Choice& choice, GenerationUpdate&& update);
  void Summarize(const GenerationUpdate& update);
  std::string EncodeFinal();
  std::string FinishReasonFor(const Choice& choice) const;

  CompletionIdentity identity_;
  EncoderOptions options_;
  std::vector<Choice> choices_;
  int unfinished_;
  GenerationUpdate summary_;
  bool finished_ = false;
};

}  // namespace qvl
