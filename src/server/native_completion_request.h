// llama-server's native POST /completion request body -> what the engine needs. The fields
// it shares with /v1/completions (sampling, stop, n_predict, samplers, grammar,
// json_schema, logit_bias, return_progress, ...) are parsed by the same code
// (ParseSharedCompletionFields); what is its own is here: a prompt may mix token ids and
// text ([12, 34, "text", 56]), logit_bias may be [[id or text, bias or false], ...],
// n_probs asks for completion_probabilities, return_tokens for the token ids, and
// cache_prompt and id_slot are taken (qvl's prefix cache serves every request).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request.h"
#include "server/chat_request.h"

namespace qvl {

// Token ids of a text, as the served model's tokenizer reads a raw prompt.
using TextTokenizer = std::function<std::vector<int32_t>(std::string_view)>;

struct NativeCompletionRequest {
  // One per prompt, in the request's order, each with prompt_text or prompt_tokens set.
  std::vector<GenerationRequest> generations;
  std::string model;  // as the client named it; empty when absent
  bool stream = false;
  // llama-server's return_progress: streamed, events with prompt_progress come first.
  bool return_progress = false;
  int n_probs = 0;  // 0: no completion_probabilities; else the alternatives per token
  bool return_tokens = false;
  // n_predict 0: the results hold no answer (each generation asks the engine for one
  // token, which they leave out).
  bool prompt_only = false;
};

// Parses and checks `body` with the limits of `policy`; `tokenize` reads the text pieces of
// a mixed prompt and logit_bias. Throws FieldError: kInvalidArgument naming the field,
// kNotFound for an unknown model.
NativeCompletionRequest ParseNativeCompletionRequest(std::string_view body,
                                                     const ChatRequestPolicy& policy,
                                                     const TextTokenizer& tokenize);

}  // namespace qvl
