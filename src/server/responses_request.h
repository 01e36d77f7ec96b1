// An OpenAI /v1/responses request body -> what the engine needs, through the same checks
// as a chat request (chat_request.h): sampling, stop strings and the token limit
// (generation_fields.h), structured output and tools (output_controls.h), images and
// their budget (chat_messages.h, media_fields.h). What differs is the shape: `input` (a
// string or a list of items: messages with input_text / input_image / output_text parts,
// function_call and function_call_output items), `instructions` (the system turn),
// `max_output_tokens`, `text.format` (JSON schema flattened into the format object) and
// flat function tools ({"type": "function", "name", "parameters"}, shown to the template
// in chat's shape so that the same tools give the same prompt). qvl's chat extensions
// (top_k, min_p, the penalties, seed, stop, ignore_eos, logit_bias, the image budget) are
// read as in chat. qvl keeps no responses, so `previous_response_id` and `conversation`
// are refused with a message saying to send the earlier turns in `input` (the prefix
// cache reuses their work). Every error names the field in the Responses shape
// ("input[1].content[0].image_url").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/request.h"
#include "server/chat_request.h"

namespace qvl {

struct ResponsesRequest {
  GenerationRequest generation;
  std::string model;  // as the client named it; empty when absent
  bool stream = false;
  bool parse_tool_calls = false;  // tools are offered: answers are split into function calls
  // include contains "message.output_text.logprobs"; generation.top_logprobs holds the
  // count (0 when top_logprobs is absent).
  bool logprobs = false;
  // The request's settings that the response object repeats, in the Responses shape with
  // defaults filled in: instructions, max_output_tokens, temperature, top_p, top_logprobs,
  // tools, tool_choice, parallel_tool_calls, text, truncation, metadata, store, user,
  // reasoning, previous_response_id. Ordered, so that tools and schemas keep the client's
  // key order (it converts to nlohmann::json, which sorts them).
  nlohmann::ordered_json echo = nlohmann::ordered_json::object();
};

// Parses and checks `body`. Throws FieldError as ParseChatRequest does; fields of the chat
// API that have a Responses spelling (max_tokens, response_format, logprobs) and features
// qvl cannot honour (stored responses and prompts, background, n, truncation "auto",
// hosted tools) are refused naming the field.
ResponsesRequest ParseResponsesRequest(std::string_view body, const ChatRequestPolicy& policy);

}  // namespace qvl
