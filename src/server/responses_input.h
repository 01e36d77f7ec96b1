// The conversation of a /v1/responses request -> the engine's chat messages and the
// images they carry, through the chat path's image and tool call readers
// (chat_messages.h), so that the same history gives the same prompt whichever API it
// comes through.
#pragma once

#include <vector>

#include "engine/request.h"
#include "server/chat_messages.h"
#include "server/request_fields.h"

namespace qvl {

// Appends to `messages` and `images`. `instructions` (a string) and the system or
// developer message items at the start of `input` become the one system message, joined
// with "\n\n" (the Qwen template shows a system turn first only). `input` is a string (one
// user message) or an array of items:
//   {"type": "message"?, "role": user|assistant|system|developer, "content": string or
//     parts: {"type": "input_text", "text"}, {"type": "input_image", "image_url", "detail"?}
//     (user messages), {"type": "output_text", "text"} and {"type": "refusal", "refusal"}
//     (assistant messages)}
//   {"type": "function_call", "call_id", "name", "arguments"}: a tool call; consecutive
//     ones, with the assistant message right before them, are one assistant turn
//   {"type": "function_call_output", "call_id", "output": string or input_text /
//     input_image parts}: a tool message.
// `earlier` (may be null): the items of a stored conversation (previous_response_id),
// read before `input` under the field "previous_response_id[i]".
// Each image carries the field of its URL ("input[1].content[0].image_url"). Throws
// FieldError naming the item or part at fault.
void ParseResponsesInput(const RequestObject& body, const nlohmann::json* earlier,
                         const MessageLimits& limits, std::vector<ChatMessage>* messages,
                         std::vector<ImageInput>* images);

}  // namespace qvl
