// An Anthropic Messages API request body (POST /v1/messages, which llama-server, Ollama
// and vLLM serve for Anthropic's SDKs and the tools built on them) -> what the engine
// needs, through the same checks as a chat request (chat_request.h): sampling, stop
// strings and the token limit (generation_fields.h), tools and structured output
// (output_controls.h), images and their budget (chat_messages.h, media_fields.h). What
// differs is the shape: a top-level `system` (a string or text blocks), `messages` of
// user and assistant turns whose content is a string or typed blocks (text, image with a
// base64 or URL source, tool_use, tool_result, thinking), `max_tokens`,
// `stop_sequences`, tools as {"name", "description", "input_schema"} with
// `tool_choice` {"type": auto|any|tool|none}, and structured output as
// `output_format` (or `output_config.format`) {"type": "json_schema", "schema"}. A
// final assistant message is continued, as Anthropic's API continues a prefilled
// answer. Every error names the field in Anthropic's shape
// ("messages[1].content[0].source.data").
#pragma once

#include <string>
#include <string_view>

#include "engine/request.h"
#include "server/chat_request.h"

namespace qvl {

struct AnthropicRequest {
  // report_progress when streamed: message_start's usage needs the prompt's size early.
  GenerationRequest generation;
  std::string model;  // as the client named it; empty when absent
  bool stream = false;
  bool parse_tool_calls = false;  // tools are offered: answers are split into tool_use blocks
};

// What the body is for: an answer (/v1/messages) or only its prompt's size
// (/v1/messages/count_tokens, whose body has no max_tokens, stream or sampling).
enum class AnthropicBody { kMessages, kCountTokens };

// Parses and checks `body`. Throws FieldError as ParseChatRequest does; features qvl
// cannot honour (server tools, files, documents, MCP servers, containers) are refused
// naming the field.
AnthropicRequest ParseAnthropicRequest(std::string_view body, const ChatRequestPolicy& policy,
                                       AnthropicBody kind = AnthropicBody::kMessages);

}  // namespace qvl
