// Turns the engine's updates for one Anthropic Messages request (/v1/messages) into the
// bytes of its HTTP response: Anthropic's Message object, or the stream of server-sent
// events that builds it (message_start, content_block_start, content_block_delta with
// text_delta / thinking_delta / input_json_delta, content_block_stop, message_delta with
// the stop reason and usage, message_stop; an `error` event when the answer fails after
// the stream began). The answer's text becomes "text" blocks; with tools offered it goes
// through a ToolCallParser and each call becomes a "tool_use" block ({"id": "toolu_...",
// "name", "input": the arguments object}) in the order the model wrote them. A Thinking
// model's reasoning comes first as a "thinking" block. stop_reason: "end_turn",
// "max_tokens", "stop_sequence" (with stop_sequence, GenerationUpdate::stop) or
// "tool_use". usage counts input_tokens without the prompt tokens read from the prefix
// cache, which are cache_read_input_tokens, as Anthropic counts them.
#pragma once

#include <string>

#include "engine/request.h"
#include "server/response_encoder.h"

namespace qvl {

struct AnthropicIdentity {
  std::string id;  // "msg_..." (NewCompletionId("msg_"))
  std::string model;
};

struct AnthropicEncoderOptions {
  bool stream = false;
  bool parse_tool_calls = false;
  bool split_reasoning = false;  // a Thinking model (ChatTemplateKind::kThinking)
};

}  // namespace qvl
