// The bodies of POST /tokenize and POST /detokenize, as llama-server and vLLM take them,
// read with the field checks of every other route (request_fields.h):
//   llama-server  /tokenize {"content", "add_special"?, "parse_special"?, "with_pieces"?}
//                 /detokenize {"tokens"}
//   vLLM          /tokenize {"model"?, "prompt", "add_special_tokens"?, "return_token_strs"?}
//                 or {"model"?, "messages", "add_generation_prompt"?,
//                 "continue_final_message"?, "add_special_tokens"?, "return_token_strs"?,
//                 and the chat request's other fields: tools, image and video budgets}
//                 /detokenize {"model"?, "tokens"}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request.h"
#include "server/chat_request.h"

namespace qvl {

struct TokenizeRequest {
  std::string model;  // as the client named it; empty when absent
  // content or prompt: tokenized as it is, the text of a special token read as that
  // token. Unset: `chat` holds the messages.
  std::optional<std::string> text;
  // messages and the fields around them as /v1/chat/completions parses them (images
  // loaded, not decoded), so that the same body counts the tokens that route prefills;
  // add_generation_prompt as the body gives it, continue_final_message as that route reads
  // it.
  GenerationRequest chat;
  bool with_pieces = false;  // llama-server's tokens as {"id", "piece"}
  bool token_strs = false;   // vLLM's token_strs beside the ids
};

// Throws FieldError as ParseChatRequest does, naming the field: none or more than one of
// content, prompt and messages, a flag that is not a boolean, parse_special false (the
// tokenizer always reads a special token's text as the token). continue_final_message is
// taken as a chat completion takes it, so that a client can count a continuation's prompt.
TokenizeRequest ParseTokenizeRequest(std::string_view body, const ChatRequestPolicy& policy);

struct DetokenizeRequest {
  std::string model;
  std::vector<int32_t> tokens;
};

// Throws FieldError naming "tokens[i]" for an id that is no integer or lies outside
// [0, vocab_size), and "model" for a model not in `model_names` (empty = any).
DetokenizeRequest ParseDetokenizeRequest(std::string_view body,
                                         const std::vector<std::string>& model_names,
                                         int32_t vocab_size);

}  // namespace qvl
