// The `messages` array of an OpenAI chat request -> the engine's chat messages and the
// images they carry, in order of appearance.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "engine/request.h"
#include "server/image_source.h"

namespace qvl {

struct MessageLimits {
  int max_images = 16;
  MediaPolicy media;
};

// Appends to `messages` and `images`. Roles: system (first message only; "developer" is
// taken as system), user, assistant, tool. Content is a string or an array of parts:
// {"type":"text","text"}, {"type":"image_url","image_url":{"url","detail"?}} (the url
// may also be given directly as a string), {"type":"image","image":URL}. Each image
// carries the field of its URL and its detail; its bytes are loaded, not decoded. Images are only
// accepted where the chat template shows them (user and tool messages). Throws
// FieldError naming the message or part at fault.
void ParseChatMessages(const nlohmann::json& value, const MessageLimits& limits,
                       std::vector<ChatMessage>* messages, std::vector<ImageInput>* images);

}  // namespace qvl
