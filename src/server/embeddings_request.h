// The bodies of POST /v1/embeddings (OpenAI's, with vLLM's chat form), POST /api/embed
// (Ollama's) and Ollama's older POST /api/embeddings -> one embed GenerationRequest per
// input, read with the field checks of every other route (request_fields.h). An embedding
// is read off the prompt (the engine's GenerationRequest::embed), so every field that
// would change a generated answer (max_tokens, temperature, stream, tools, ...) is refused
// naming it rather than ignored: a client that sends one expects something qvl would not
// do.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request.h"
#include "server/chat_request.h"

namespace qvl {

// Most inputs one embeddings request may list (each is a prompt the engine prefills).
inline constexpr int kMaxEmbeddingInputs = 128;

struct EmbeddingsRequest {
  std::vector<GenerationRequest> inputs;  // in input order, each with embed = true
  std::string model;                      // as the client named it; empty when absent
  bool base64 = false;                    // encoding_format "base64"
  int64_t dimensions = 0;                 // 0: all hidden_size values
};

// POST /v1/embeddings: {"input": a string, strings, token ids or lists of token ids,
// "model"?, "encoding_format"?: "float" | "base64", "dimensions"?: 1..hidden_size,
// "user"?}. A string is tokenized as it is (no chat template, as /v1/completions' prompt),
// token ids are used as they are. vLLM's chat form gives "messages" (as
// /v1/chat/completions reads them, images and videos included) instead of "input": one
// input rendered by the chat template, with "add_generation_prompt" (default false).
// Each input's messages_field names it ("input", "input[3]", "messages") for an error
// about its prompt. Throws FieldError: kNotFound for a model not in policy.model_names,
// kTooLarge for an image over the byte limit, kInvalidArgument naming the field for the
// rest (an empty input, more than kMaxEmbeddingInputs, both input and messages, a
// generation field, continue_final_message).
EmbeddingsRequest ParseEmbeddingsRequest(std::string_view body, const ChatRequestPolicy& policy,
                                         int64_t hidden_size);

// POST /api/embed: {"model", "input": a string or strings, "truncate"?, "dimensions"?,
// "options"?, "keep_alive"?}; model, options and keep_alive as Ollama's other routes read
// them (ollama_request.h). An absent or empty input ("" or []) lists no inputs, as Ollama
// answers it with no embeddings (a client loading the model). "truncate" is read as a
// boolean and changes nothing: qvl never cuts a prompt, so an input longer than the
// context is an error whichever way it is set. Throws FieldError as
// ParseEmbeddingsRequest does.
EmbeddingsRequest ParseOllamaEmbedRequest(std::string_view body, const ChatRequestPolicy& policy,
                                          int64_t hidden_size);

// POST /api/embeddings, Ollama's older route: {"model", "prompt": a string, "options"?,
// "keep_alive"?}, model, options and keep_alive as /api/embed reads them. An absent or
// empty prompt lists no inputs (a client loading the model); otherwise one input whose
// errors name "prompt". "input" (/api/embed's field, which Ollama would ignore here and
// answer an empty embedding) is refused naming it. Throws FieldError as
// ParseEmbeddingsRequest does.
EmbeddingsRequest ParseOllamaEmbeddingsRequest(std::string_view body,
                                               const ChatRequestPolicy& policy);

}  // namespace qvl
