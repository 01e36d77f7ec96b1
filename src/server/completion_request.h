// A legacy OpenAI /v1/completions request body -> what the engine needs: each prompt is
// raw text, tokenized as is (no chat template, no images), or token ids, and a request may
// list several. The fields it shares with chat completions (model, sampling, stop,
// max_tokens, streaming, n, logit_bias, response_format, guided decoding) are parsed by
// the same code; what this API alone has (echo, suffix, best_of, integer logprobs) is here.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request.h"
#include "server/chat_request.h"
#include "server/request_fields.h"
#include "text/tokenizer.h"

namespace qvl {

// As OpenAI: a completion without max_tokens is 16 tokens long.
constexpr int kDefaultTextCompletionTokens = 16;
// The legacy API's limit on alternatives per token.
constexpr int kMaxLegacyLogprobs = 5;
// Most prompts one request may list: each is a request the engine prefills, and the
// queue admits the list as one (as an embeddings request's inputs).
constexpr int kMaxCompletionPrompts = 128;

struct CompletionRequest {
  // One per prompt, in the request's order, each with prompt_text or prompt_tokens set and
  // every other field the same. Choice i * n + j of the response is answer j of prompt i.
  std::vector<GenerationRequest> generations;
  std::string model;  // as the client named it; empty when absent
  bool stream = false;
  bool include_usage = false;
  int logprobs = -1;  // -1: none; 0..5
  // Each answer's text starts with its prompt's (and, with logprobs, its tokens start with
  // the prompt's: generations[i].prompt_logprobs is set).
  bool echo = false;
  // vLLM's prompt_logprobs: N >= 0 puts each choice's prompt scores in vLLM's shape
  // (PromptLogprobsJson); -1 when not asked.
  int prompt_logprobs = -1;
  // echo with max_tokens 0: the answers are their prompts alone (generations[i] asks the
  // engine for one token, which is not sent).
  bool prompt_only = false;
  // llama-server's return_progress, which it takes here too: streamed, chunks with
  // prompt_progress come before the first token's.
  bool return_progress = false;
};

// Parses and checks `body` with the limits of `policy` (model names, stop strings,
// max_tokens). Throws FieldError: kInvalidArgument naming the field, kNotFound for an
// unknown model.
CompletionRequest ParseCompletionRequest(std::string_view body, const ChatRequestPolicy& policy);

// What /v1/completions shares with llama-server's /completion (native_completion_request.h),
// read into `g` (the generation every prompt copies): sampling, stop, max_tokens and
// n_predict (0 when neither is given), n, logit_bias, response_format, guided decoding and
// the other servers' fields; the stream, include_usage and return_progress into `out`.
// `text` is the body as sent (a schema's key order).
void ParseSharedCompletionFields(const RequestObject& body, std::string_view text,
                                 const ChatRequestPolicy& policy, CompletionRequest* out,
                                 GenerationRequest* g);

// One prompt of "prompt" at `field` into `g`: a non-empty string or token ids.
void ParseCompletionPrompt(const nlohmann::json& prompt, const std::string& field,
                           GenerationRequest* g);

// Reads one prompt at its field ("prompt", "prompt[2]") into `g`.
using PromptReader = std::function<void(const nlohmann::json& prompt, const std::string& field,
                                        GenerationRequest* g)>;

// The body's "prompt" as both completion APIs list prompts: a value `is_one` takes for a
// single prompt, else an array of 1 to kMaxCompletionPrompts prompts. Each is read by
// `read` into a copy of `shared`. Throws FieldError naming "prompt" or the prompt's field.
std::vector<GenerationRequest> ParsePromptList(
    const RequestObject& body, const GenerationRequest& shared,
    const std::function<bool(const nlohmann::json&)>& is_one, const PromptReader& read);

// Each prompt's text: as sent, or the text of its token ids (special tokens included), as
// an echo repeats it and llama-server's result names it.
std::vector<std::string> PromptTexts(const std::vector<GenerationRequest>& prompts,
                                     const Tokenizer& tokenizer);

// A token id at `field`: an integer from 0 that fits int32 (the vocabulary is the
// engine's to check). Throws FieldError naming `field`.
int32_t ParseTokenId(const nlohmann::json& id, const std::string& field);

// Token ids [1, 2, 3] at `field` (a prompt given as ids, here and on /v1/embeddings): not
// empty, each a ParseTokenId. Throws FieldError naming `field` or the id's "field[i]".
std::vector<int32_t> ParseTokenIds(const nlohmann::json& ids, const std::string& field);

}  // namespace qvl
