// The legacy OpenAI text completion API's response (POST /v1/completions): one
// "text_completion" object, or server-sent chunks of the same shape ending with
// "data: [DONE]". Logprobs are the legacy shape: parallel lists `tokens`,
// `token_logprobs`, `top_logprobs` (one {token: logprob} object per token) and
// `text_offset` (byte offset of each token in the completion text).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "server/openai_format.h"
#include "server/response_encoder.h"

namespace qvl {

struct TextEncoderOptions {
  bool stream = false;
  bool include_usage = false;
  int logprobs = -1;  // -1: none; N >= 0: the chosen token's logprob and N alternatives
  // Streamed: updates with GenerationUpdate::progress become chunks with no choices and a
  // prompt_progress, as on chat (llama-server's return_progress); otherwise nothing.
  bool progress = false;
};

class TextCompletionEncoder : public ResponseEncoder {
 public:
  TextCompletionEncoder(CompletionIdentity identity, const TextEncoderOptions& options);

  std::string Start() override { return ""; }
  std::string Encode(GenerationUpdate&& update) override;
  bool finished() const override { return finished_; }
  const GenerationUpdate& summary() const override { return summary_; }

 private:
  nlohmann::json Object(nlohmann::json choices) const;
  // `stop_reason` (StopReasonJson) is in every choice, null until the last, as vLLM's.
  nlohmann::json Choice(const std::string& text, nlohmann::json logprobs,
                        nlohmann::json finish_reason, nlohmann::json stop_reason) const;
  // Appends `update`'s tokens to `logprobs` (an object of the four lists).
  void AddLogprobs(const GenerationUpdate& update, nlohmann::json* logprobs);

  CompletionIdentity identity_;
  TextEncoderOptions options_;
  std::string text_;         // non-streamed: the whole answer
  nlohmann::json logprobs_;  // non-streamed: every token's
  int64_t text_offset_ = 0;  // bytes of completion text before the next token
  bool finished_ = false;
  GenerationUpdate summary_;  // the final update without its text
};

}  // namespace qvl
