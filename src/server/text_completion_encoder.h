// The legacy OpenAI text completion API's response (POST /v1/completions): one
// "text_completion" object, or server-sent chunks of the same shape ending with
// "data: [DONE]". A request of several prompts with n answers each has prompts x n
// choices; choice i * n + j is answer j of prompt i, and updates arrive with that index.
// Logprobs are the legacy shape: parallel lists `tokens`, `token_logprobs`,
// `top_logprobs` (one {token: logprob} object per token) and `text_offset` (byte offset of
// each token in the choice's text). With echo, a choice's text and lists start with its
// prompt's (the first prompt token has no logprob: null, as OpenAI's and vLLM's).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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
  int prompts = 1;
  int n = 1;  // answers per prompt
  // Echo: each prompt's text, which its answers start with; empty without echo. With
  // logprobs, the prompt's tokens come in the first update of its answer 0
  // (GenerationUpdate::prompt_tokens).
  std::vector<std::string> echo = {};
  // With echo: the answers' own tokens are left out (max_tokens 0), so each is its prompt,
  // ended by "length", with no completion tokens.
  bool prompt_only = false;
  // vLLM's prompt_logprobs (N >= 0; not streamed): each choice's "prompt_logprobs"
  // (PromptLogprobsJson) from its prompt's tokens.
  int prompt_logprobs = -1;
};

class TextCompletionEncoder : public ResponseEncoder {
 public:
  TextCompletionEncoder(CompletionIdentity identity, TextEncoderOptions options);

  std::string Start() override { return ""; }
  std::string Encode(GenerationUpdate&& update) override;
  bool finished() const override { return unfinished_ == 0; }
  const GenerationUpdate& summary() const override { return summary_; }

 private:
  struct Choice {
    std::string text;         // non-streamed: the whole answer
    nlohmann::json logprobs;  // non-streamed: every token's
    int64_t text_offset = 0;  // bytes of the choice's text before its next token
    bool echoed = false;      // its prompt went out (or is in `text`)
    bool finished = false;
    FinishReason reason = FinishReason::kNone;
    nlohmann::json stop_reason;
    nlohmann::json error;
    // Updates that came before its prompt's tokens (NeedsPromptTokens, answers after the
    // prompt's first): held until those arrive, so the prompt goes first.
    std::vector<GenerationUpdate> held;
  };
  struct Prompt {
    bool tokens_known = false;  // answer 0's first update came
    std::vector<GeneratedToken> tokens;
  };

  nlohmann::json Object(nlohmann::json choices) const;
  nlohmann::json ChoiceJson(int index, const std::string& text, nlohmann::json logprobs,
                            nlohmann::json finish_reason, nlohmann::json stop_reason) const;
  bool WithLogprobs() const { return options_.logprobs >= 0; }
  bool Echo() const { return !options_.echo.empty(); }
  // The answers need their prompt's tokens (GenerationUpdate::prompt_tokens).
  bool NeedsPromptTokens() const {
    return options_.prompt_logprobs >= 0 || (Echo() && WithLogprobs());
  }
  // Appends tokens to `logprobs` (an object of the four lists) at `choice`'s offsets.
  void AddLogprobs(const std::vector<GeneratedToken>& tokens, bool prompt, Choice& choice,
                   nlohmann::json* logprobs) const;
  // The choice's text and logprobs of `update`, with its prompt's first when not echoed yet.
  void Take(int index, Choice& choice, const GenerationUpdate& update, std::string* text,
            nlohmann::json* logprobs);
  // What `update` of choice `index` adds: its chunks when streamed, else nothing.
  std::string Add(int index, GenerationUpdate&& update);
  std::string Final() const;

  CompletionIdentity identity_;
  TextEncoderOptions options_;
  std::vector<Choice> choices_;
  std::vector<Prompt> prompts_;
  int unfinished_;
  GenerationUpdate summary_;  // the request as a whole, once finished
};

}  // namespace qvl
