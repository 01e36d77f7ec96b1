// The `messages` array of an OpenAI chat request -> the engine's chat messages and the
// images they carry, in order of appearance.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/request.h"
#include "server/image_source.h"
#include "server/request_fields.h"

namespace qvl {

struct MessageLimits {
  int max_images = 16;
  MediaPolicy media;  // media.video: videos per request, frames per list, bytes per file
  // Turn a video part's total_pixels (qwen-vl-utils' pixels of frame pairs) into pixels
  // of all frames; needed only by parts that give it.
  int64_t pixels_per_image_token = 0;
  int64_t pixels_per_video_token = 0;
};

// Appends to `messages` and `images`. Roles: system (first message only; "developer" is
// taken as system), user, assistant, tool. Content is a string or an array of parts:
// {"type":"text","text"}, {"type":"image_url","image_url":{"url","detail"?}} (the url
// may also be given directly as a string), {"type":"image","image":URL}, and videos:
// {"type":"video","video":[frame URLs],"fps":F} (every frame of the clip, shown at F per
// second), {"type":"video","video":URL} or {"type":"video_url","video_url":{"url"}} (a
// video file); optional qwen-vl-utils keys: the rate to sample at ("fps" for a file,
// "sample_fps" for a frame list) or "nframes", "min_frames", "max_frames", and the size:
// "min_pixels" / "max_pixels" per frame, "total_pixels" over all frame pairs. Each image carries
// the field of its URL and its detail; its bytes are loaded, not decoded. Images and videos are
// only accepted where the chat template shows them (user and tool messages); without `videos` a
// video part is refused. Throws FieldError naming the message or part at fault.
void ParseChatMessages(const nlohmann::json& value, const MessageLimits& limits,
                       std::vector<ChatMessage>* messages, std::vector<ImageInput>* images,
                       std::vector<VideoInput>* videos = nullptr);

// The pieces of a message that other chat-shaped APIs (/v1/responses) share, so that an
// image or a tool call is checked the same way whichever API it comes through.

// A text part holding `text`.
ChatPart TextPart(std::string text);

// `message`'s role, the `index`th of the messages: system (first message only;
// "developer" is taken as system), user, assistant or tool.
std::string ParseChatRole(const RequestObject& message, size_t index);

// [{"function": {"name", "arguments"}}] at `field` (chat's "id" and "type" are not read):
// an assistant turn of the history that called tools. Throws unless `role` is assistant
// or the list is empty.
void ParseToolCalls(const nlohmann::json& value, const std::string& field, const std::string& role,
                    std::vector<ChatToolCall>* calls);

// Checks that an image at `field` of a `role` message may stand there: in user and tool
// messages only (the chat template drops images from others).
void CheckImageRole(const std::string& role, const std::string& field);

// CheckImageRole for an image part, which may also carry no per-image size keys. Throws
// FieldError.
void CheckImagePart(const RequestObject& part, const std::string& role, const std::string& field);

// Audio and file parts, which qvl does not read: IsUnreadablePartType says whether `type`
// is one, FailUnreadablePart refuses the part naming its type.
bool IsUnreadablePartType(const std::string& type);
[[noreturn]] void FailUnreadablePart(const RequestObject& part, const std::string& type);

// OpenAI's image detail, `object`'s "detail": auto (also when absent), low or high.
ImageDetail ParseImageDetail(const RequestObject& object);

// Loads the image at `url` (a data: URL, an http(s) URL or a file, as limits.media
// allows) as the next of `images`, which carries `url_field` (where the URL sits in the
// request) into every error about it. Refused past limits.max_images. Returns the part
// that stands for it in its message.
ChatPart AddImage(const std::string& url, std::string url_field, ImageDetail detail,
                  const MessageLimits& limits, std::vector<ImageInput>* images);

// A tool call's "arguments" in `function`: a JSON string as it is, an object serialized,
// "{}" when absent.
std::string ParseToolCallArguments(const RequestObject& function);

}  // namespace qvl
