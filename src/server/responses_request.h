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
// read as in chat. With `store` (OpenAI's default: true) and a server that keeps
// responses, the answer is kept with its conversation, and a later request continues it
// with `previous_response_id`: the stored conversation goes before its `input`
// (OpenAI's rule: `instructions` and tools are the new request's own). `conversation`
// (the Conversations API) is refused. Every error names the field in the Responses shape
// ("input[1].content[0].image_url").
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
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
  // llama-server's return_progress, as on chat: streamed, qvl.prompt_progress events come
  // before the answer's.
  bool return_progress = false;
  // The request's settings that the response object repeats, in the Responses shape with
  // defaults filled in: instructions, max_output_tokens, temperature, top_p, top_logprobs,
  // tools, tool_choice, parallel_tool_calls, text, truncation, metadata, store, user,
  // reasoning, previous_response_id. Ordered, so that tools and schemas keep the client's
  // key order (it converts to nlohmann::json, which sorts them). reasoning.summary is the
  // one asked for (auto, concise, detailed; null when none), which the encoder honours;
  // reasoning.effort is the level asked for on a Thinking model, whose thinking budget
  // it sets (reasoning_effort.h), and null on a model that does not reason.
  nlohmann::ordered_json echo = nlohmann::ordered_json::object();
  // The answer is to be kept (store, and the server keeps responses): the conversation it
  // continues, as input items — the stored one of previous_response_id, then this
  // request's input (a string input as one user message). The answer's output items
  // complete it once it is done.
  bool store = false;
  nlohmann::json conversation = nlohmann::json::array();
};

// The conversation a stored response ended, as the JSON text of an array of input items;
// nullopt when no response with that id is kept. Empty: the server keeps no responses.
using StoredConversation =
    std::function<std::optional<std::string>(const std::string& response_id)>;

// Why a response id is not found: "no stored response \"ID\": it was never stored ...".
std::string NoStoredResponse(std::string_view id);

// Parses and checks `body`. Throws FieldError as ParseChatRequest does; fields of the chat
// API that have a Responses spelling (max_tokens, response_format, logprobs) and features
// qvl cannot honour (the Conversations API, stored prompts, background, n, truncation
// "auto", hosted tools) are refused naming the field, as is a previous_response_id that
// `stored` does not find.
ResponsesRequest ParseResponsesRequest(std::string_view body, const ChatRequestPolicy& policy,
                                       const StoredConversation& stored = {});

}  // namespace qvl
