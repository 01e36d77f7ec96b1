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
#include "server/response_encoder.h"
#include "server/tool_call_parser.h"
#include "text/reasoning_split.h"

namespace qvl {

struct EncoderOptions {
  bool stream = false;
  bool include_usage = false;
  bool logprobs = false;
  int choices = 1;
  bool parse_tool_calls = false;
  // A Thinking model (ChatTemplateKind::kThinking): each choice's text is split at
  // "</think>" into reasoning_content (delta.reasoning_content chunks while streaming) and
  // content; tool calls are parsed from the content only.
  bool split_reasoning = false;
  // Streamed: updates with GenerationUpdate::progress become chunks with no choices and a
  // prompt_progress (llama-server's return_progress); otherwise they write nothing.
  bool progress = false;
  // vLLM's prompt_logprobs (N >= 0; not streamed): the body's "prompt_logprobs"
  // (PromptLogprobsJson) from the prompt's entries, which choice 0's updates bring.
  int prompt_logprobs = -1;
};

class CompletionEncoder : public ResponseEncoder {
 public:
  CompletionEncoder(CompletionIdentity identity, const EncoderOptions& options);

  // What to send before any update: the stream's role chunks; "" when not streaming.
  std::string Start() override;
  // What to send for `update` (may be ""). After the final update of the last choice the
  // response is complete: streams end with "data: [DONE]". A choice that ended early (the
  // server shut down, the engine failed) reports "length" and says why in an `error`
  // object (CutShortErrorJson).
  std::string Encode(GenerationUpdate&& update) override;
  bool finished() const override { return finished_; }
  // Once finished: usage summed over the choices (the prompt once), the first choice's
  // timings, and the first cut-short choice's reason.
  const GenerationUpdate& summary() const override { return summary_; }

 private:
  struct Choice {
    std::string text;                    // non-streamed: the whole answer
    std::vector<GeneratedToken> tokens;  // non-streamed with logprobs
    ToolCallParser tools;
    ReasoningSplitter splitter;
    std::string reasoning;              // non-streamed: the whole reasoning
    std::vector<ParsedToolCall> calls;  // non-streamed
    bool finished = false;
    FinishReason reason = FinishReason::kNone;
    nlohmann::json error;        // why it was cut short; null if it was not
    nlohmann::json stop_reason;  // StopReasonJson of its final update
  };

  // With split_reasoning, takes the reasoning out of update.text (into `reasoning`),
  // leaving the content.
  void SplitReasoning(Choice& choice, GenerationUpdate& update, std::string* reasoning) const;
  std::string EncodeStreamed(Choice& choice, GenerationUpdate&& update);
  void Accumulate(Choice& choice, GenerationUpdate&& update);
  std::string EncodeFinal();
  std::string FinishReasonFor(const Choice& choice) const;

  CompletionIdentity identity_;
  EncoderOptions options_;
  std::vector<Choice> choices_;
  int unfinished_;
  GenerationUpdate summary_;
  std::vector<GeneratedToken> prompt_tokens_;  // with prompt_logprobs
  bool finished_ = false;
};

}  // namespace qvl
