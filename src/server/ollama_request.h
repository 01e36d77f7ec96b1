// Ollama's API bodies (POST /api/chat and /api/generate) -> what the engine needs,
// through the same checks, ranges and grammar compilation as the OpenAI routes
// (generation_fields.h, output_controls.h, chat_messages.h, request_ranges.h), so that
// tools and clients written for Ollama can use qvl unchanged. What differs is the shape:
// sampling settings sit in "options" under Ollama's names (num_predict, repeat_penalty,
// ...), images are base64 strings in a message's "images" list, "format" is "json" or a
// JSON schema, and answers stream unless "stream": false. Errors are FieldErrors naming
// the field in Ollama's shape ("messages[0].images[1]", "options.temperature").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/request.h"
#include "server/chat_request.h"
#include "server/request_fields.h"

namespace qvl {

struct OllamaRequest {
  GenerationRequest generation;
  std::string model;  // as the client named it (Ollama requires it)
  bool stream = true;
  bool parse_tool_calls = false;  // tools are offered: answers are split into tool calls
  // Nothing to answer (generate without prompt or images, chat without messages): Ollama
  // loads the model and says so; the route answers at once.
  bool load_only = false;
};

// POST /api/chat: {"model", "messages": [{"role", "content", "images"?, "tool_calls"?,
// "tool_name"?}], "tools"?, "format"?, "options"?, "stream"?, "keep_alive"?, "think"?,
// "logprobs"?, "top_logprobs"?} (logprobs sets the generation's top_logprobs: 0 to 20).
// Both parsers throw FieldError as ParseChatRequest does: kNotFound for a model that is
// not served (a ":latest" tag is the bare name), kTooLarge for an image over the byte
// limit, kInvalidArgument for the rest, including options and fields that would change
// the answer in ways qvl cannot follow (think that is not what the model does,
// tfs_z, suffix, ...); think's level ("low", "medium", "high") sets the generation's
// reasoning_budget (reasoning_effort.h). A final
// assistant message with text and no tool calls is continued, as Ollama does (its
// prefill): the request's continue_final_message is set.
OllamaRequest ParseOllamaChat(std::string_view body, const ChatRequestPolicy& policy);

// POST /api/generate: {"model", "prompt", "system"?, "images"?, "format"?, "options"?,
// "stream"?, "raw"?, "keep_alive"?, "logprobs"?, "top_logprobs"?}; `raw` sends the prompt
// as is (no chat template).
OllamaRequest ParseOllamaGenerate(std::string_view body, const ChatRequestPolicy& policy);

// POST /api/show's body ({"model"} or the older {"name"}): the served name it asks for
// (a ":latest" tag dropped). Throws FieldError as the parsers do.
std::string OllamaModelName(std::string_view body, const std::vector<std::string>& names);

// What every Ollama route reads alike (/api/embed too).
// "model" at `key` (required): the client's name, a ":latest" tag standing for the bare
// served name. Throws FieldError(kNotFound) unless it is one of `names` (empty = any).
std::string ParseOllamaModel(const RequestObject& body, const std::vector<std::string>& names,
                             std::string_view key = "model");
// "keep_alive" (a duration or seconds; qvl keeps its one model loaded) and "options":
// sampling, stop and num_predict under Ollama's names into `g`, the runner's options
// (num_ctx, num_thread, ...) checked for their types, options qvl cannot follow refused.
void ParseOllamaOptions(const RequestObject& body, int max_stop, GenerationRequest* g);

}  // namespace qvl
