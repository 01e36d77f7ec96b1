// The conversation of an Anthropic Messages request (anthropic_request.h) -> the engine's
// chat messages and the images they carry, through the chat path's image reader
// (chat_messages.h), so that the same history gives the same prompt whichever API it
// comes through.
#pragma once

#include <string_view>
#include <vector>

#include "engine/request.h"
#include "server/chat_messages.h"
#include "server/request_fields.h"

namespace qvl {

// Appends to `messages` and `images`. The top-level "system" (a string, or text blocks
// joined with "\n\n" as the Responses API joins its instructions) becomes the system
// message. Each of "messages" is {"role": user|assistant, "content": a string or blocks}:
//   {"type": "text", "text"}: a text part;
//   {"type": "image", "source": {"type": "base64", "media_type", "data"} or
//     {"type": "url", "url"}}: an image part, in user messages and tool results only;
//   {"type": "tool_use", "id", "name", "input"} (assistant): a tool call, its input
//     shown as the chat template's tojson shows an object (in the client's key order);
//   {"type": "tool_result", "tool_use_id", "content": a string or text and image blocks,
//     "is_error"?} (user): a tool message; the tool results of a user message come
//     before a user message with its other blocks;
//   {"type": "thinking", "thinking", "signature"} (assistant): the turn's reasoning, as
//     chat's reasoning_content; {"type": "redacted_thinking", "data"} is left out.
// cache_control on a block is checked to be an object and changes nothing (qvl's prefix
// cache needs no marks). `text` is the body as sent, from which a tool_use input is
// re-read in the client's key order. Each image carries the field of its payload
// ("messages[1].content[0].source.data"). Throws FieldError naming the message or block
// at fault; other block types (documents, server tools' blocks) are refused.
void ParseAnthropicMessages(const RequestObject& body, std::string_view text,
                            const MessageLimits& limits, std::vector<ChatMessage>* messages,
                            std::vector<ImageInput>* images);

}  // namespace qvl
