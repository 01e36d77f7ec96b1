// What one request has generated, turned into the updates its client sees: tokens are
// detokenized incrementally (never half a UTF-8 character), stop strings are cut out,
// end-of-sequence tokens and the request's stop token ids end the answer without text
// (with include_stop_str, a stop string and a stop token id's text end it instead),
// max_tokens ends it with "length", and logprobs are attached when asked for. Stop
// strings are looked for only in the text after the first min_tokens tokens, as vLLM's
// v1 engine does: the text of those is never cut. A Thinking model's stop strings match its
// reply only: the text after limits.reasoning_end and the newlines that lead the reply
// (what clients receive as the content, ReasoningSplitter), so that a stop string meant
// for the answer ("\n\n", "```") does not cut the reasoning and leave no answer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request.h"
#include "engine/stop_matcher.h"
#include "text/stream_decoder.h"
#include "text/tokenizer.h"

namespace qvl {

struct OutputLimits {
  int max_tokens = 0;
  bool ignore_eos = false;
  int top_logprobs = -1;
  std::vector<int32_t> eos_ids;
  std::vector<int32_t> stop_token_ids;  // checked against the vocabulary
  int min_tokens = 0;                   // at most max_tokens
  std::vector<std::string> stop;
  // vLLM's include_stop_str_in_output: the stop string that matched, or the text of the
  // stop token id that ended the answer, is its last text.
  bool include_stop_str = false;
  // A Thinking model's "</think>" token: the tokens up to it are reasoning, which a
  // grammar does not bind (TokenConstraints' grammar_after) and stop strings do not
  // match (-1: none).
  int32_t reasoning_end = -1;
  // GenerationRequest::reasoning_budget where reasoning_end is set; -1 otherwise.
  int reasoning_budget = -1;
};

// The tokens that end an answer: the end-of-sequence ids (unless ignore_eos) and the
// request's stop token ids.
std::vector<int32_t> AnswerEndTokens(const OutputLimits& limits);

// `token` with its logprob under the raw `logits` and the `n` most likely tokens there, each
// with its bytes as text: an entry of GenerationUpdate::tokens or prompt_tokens. `top` is
// scratch, kept by the caller so that a decode step does not allocate for it.
GeneratedToken TokenLogprobs(const Tokenizer& tokenizer, const float* logits, int64_t vocab,
                             int32_t token, int n, std::vector<std::pair<int32_t, float>>* top);

class OutputStream {
 public:
  OutputStream(const Tokenizer& tokenizer, const OutputLimits& limits);

  // Takes the sampled token and the raw logits it came from (for logprobs). Fills
  // `update` with the text and token now visible; returns the reason to finish, or
  // FinishReason::kNone to continue.
  FinishReason Accept(int32_t token, const float* logits, int64_t vocab, GenerationUpdate* update);

  // Text still held back (an incomplete character, a possible stop-string start), for the
  // final update; empty after a stop string matched.
  std::string Flush();

  int64_t generated() const { return generated_; }
  // The stop string that ended the answer; empty when none did.
  const std::string& matched_stop() const { return stop_.matched(); }
  // The stop token id that ended the answer; unset when none did. An end-of-sequence id is
  // not one, unless ignore_eos left it to limits.stop_token_ids.
  std::optional<int32_t> matched_stop_token() const { return stop_token_; }
  // Of generated(), the reasoning: those up to and including limits.reasoning_end, or all
  // of them while it has not come.
  int64_t reasoning() const {
    return limits_.reasoning_end < 0 ? 0 : reasoning_end_at_ > 0 ? reasoning_end_at_ : generated_;
  }

 private:
  // Where the text goes: a Thinking model's reasoning and the newlines that lead its
  // reply pass as they are; the reply goes through the stop strings.
  enum class Phase { kReasoning, kReplyStart, kReply };

  // Whether `token`, one that ends the answer, is a stop token id rather than an
  // end-of-sequence one.
  bool IsStopToken(int32_t token) const;
  // `text` as the client may see it now, through the stop strings where they apply.
  std::string Pass(std::string_view text);

  const Tokenizer& tokenizer_;
  OutputLimits limits_;
  std::vector<int32_t> end_tokens_;  // AnswerEndTokens(limits_)
  StreamDecoder decoder_;
  StopMatcher stop_;
  Phase phase_;
  int64_t generated_ = 0;
  int64_t reasoning_end_at_ = 0;  // generated_ when reasoning_end came; 0 before
  std::optional<int32_t> stop_token_;
  std::vector<std::pair<int32_t, float>> top_;
};

}  // namespace qvl
