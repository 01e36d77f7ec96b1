#include "server/chat_messages.h"

#include <optional>
#include <string>
#include <string_view>

#include "base/field_error.h"
#include "image/image_limits.h"
#include "server/request_fields.h"

namespace qvl {
namespace {

ChatPart ImagePart() {
  ChatPart part;
  part.kind = ChatPart::Kind::kImage;
  return part;
}

class MessageParser {
 public:
  MessageParser(const MessageLimits& limits, std::vector<ImageInput>* images,
                std::vector<VideoInput>* videos)
      : limits_(limits), images_(images), videos_(videos) {}

  ChatMessage Parse(const nlohmann::json& value, size_t index) {
    const RequestObject message(value, IndexField("messages", index));
    ChatMessage out;
    out.role = ParseChatRole(message, index);
    // The template renders neither, as transformers' does not; OpenAI refuses other types,
    // and a client that sent a number by mistake hears of it.
    message.String("name");
    message.String("tool_call_id");
    if (const nlohmann::json* calls = message.Find("tool_calls")) {
      ParseToolCalls(*calls, message.Field("tool_calls"), out.role, &out.tool_calls);
    }
    // What vLLM and llama-server send back as a Thinking model's reasoning, and take in
    // the history; the Thinking template renders it.
    if (std::optional<std::string> reasoning = message.String("reasoning_content")) {
      if (out.role != "assistant") {
        FailField(ErrorCode::kInvalidArgument, message.Field("reasoning_content"),
                  "is only for assistant messages");
      }
      out.reasoning = std::move(reasoning);
    }
    const nlohmann::json* content = message.Find("content");
    if (content == nullptr) {
      if (out.role != "assistant") {
        FailField(ErrorCode::kInvalidArgument, message.Field("content"), "is required");
      }
      out.content_is_string = true;
    } else if (content->is_string()) {
      out.content_is_string = true;
      out.parts.push_back(TextPart(content->get<std::string>()));
    } else if (content->is_array()) {
      out.content_is_string = false;
      for (size_t i = 0; i < content->size(); ++i) {
        out.parts.push_back(
            ParsePart((*content)[i], IndexField(message.Field("content"), i), out.role));
      }
    } else {
      FailField(ErrorCode::kInvalidArgument, message.Field("content"),
                "expected a string or an array of content parts, got ", JsonKind(*content));
    }
    return out;
  }

 private:
  ChatPart ParsePart(const nlohmann::json& value, const std::string& field,
                     const std::string& role) {
    const RequestObject part(value, field);
    std::string type = part.String("type").value_or("");
    if (type.empty()) {
      // The chat template recognises parts by their keys as well; so do we.
      if (part.Find("image_url") != nullptr) {
        type = "image_url";
      } else if (part.Find("image") != nullptr) {
        type = "image";
      } else if (part.Find("video_url") != nullptr) {
        type = "video_url";
      } else if (part.Find("video") != nullptr) {
        type = "video";
      } else if (part.Find("text") != nullptr) {
        type = "text";
      } else {
        FailField(ErrorCode::kInvalidArgument, part.Field("type"), "is required");
      }
    }
    if (type == "text") return TextPart(part.RequiredString("text"));
    if (type == "image_url" || type == "image") {
      CheckImagePart(part, role, field);
      return LoadImage(part, type, field);
    }
    if ((type == "video" || type == "video_url") && videos_ != nullptr) {
      if (role != "user" && role != "tool") {
        FailField(ErrorCode::kInvalidArgument, field,
                  "videos are only accepted in user and tool messages (the chat template "
                  "drops them from ",
                  role, " messages)");
      }
      return LoadVideo(part, type, field);
    }
    if (IsUnreadablePartType(type) || type == "video" || type == "video_url") {
      FailUnreadablePart(part, type);
    }
    FailField(ErrorCode::kInvalidArgument, part.Field("type"), "unknown content part type \"", type,
              "\"; use text, image_url or image");
  }

  ChatPart LoadImage(const RequestObject& part, const std::string& type, const std::string& field) {
    const nlohmann::json* value = part.Find(type);
    if (value == nullptr) FailField(ErrorCode::kInvalidArgument, part.Field(type), "is required");
    if (value->is_string()) {
      return AddImage(value->get<std::string>(), part.Field(type), ImageDetail::kAuto, limits_,
                      images_);
    }
    const RequestObject image_url(*value, part.Field(type));
    std::string url = image_url.RequiredString("url");
    const ImageDetail detail = ParseImageDetail(image_url);
    return AddImage(url, image_url.Field("url"), detail, limits_, images_);
  }

  // {"video": [frame URLs], "fps": F}, {"video": URL} or {"video_url": {"url"}}.
  ChatPart LoadVideo(const RequestObject& part, const std::string& type, const std::string& field) {
    const nlohmann::json* value = part.Find(type);
    if (value == nullptr) FailField(ErrorCode::kInvalidArgument, part.Field(type), "is required");
    const VideoLimits& video_limits = limits_.media.video;
    if (static_cast<int>(videos_->size()) >= video_limits.max_videos_per_request) {
      FailField(ErrorCode::kInvalidArgument, field, "too many videos: this server accepts at most ",
                video_limits.max_videos_per_request, " per request");
    }
    VideoInput video;
    video.name = StrCat("video ", videos_->size() + 1, " (", field, ")");
    const bool frame_list = type == "video" && value->is_array();
    ParseVideoSampling(part, frame_list, &video);
    if (frame_list) {
      const std::string frames_field = part.Field("video");
      video.field = frames_field;
      if (value->empty()) FailField(ErrorCode::kInvalidArgument, frames_field, "has no frames");
      if (static_cast<int64_t>(value->size()) > video_limits.max_input_frames) {
        FailField(ErrorCode::kTooLarge, frames_field, "has ", value->size(),
                  " frames; this server accepts at most ", video_limits.max_input_frames);
      }
      // Without it transformers assumes 24; a wrong rate silently changes the sampling
      // and the timestamps, so qvl asks for it.
      const std::optional<double> fps = part.Number("fps", 1e-3, 1000);
      if (!fps) {
        FailField(ErrorCode::kInvalidArgument, part.Field("fps"),
                  "is required with a list of frames (the rate they were taken at)");
      }
      video.fps = *fps;
      for (size_t i = 0; i < value->size(); ++i) {
        const std::string frame_field = IndexField(frames_field, i);
        if (!(*value)[i].is_string()) {
          FailField(ErrorCode::kInvalidArgument, frame_field, "expected an image URL, got ",
                    JsonKind((*value)[i]));
        }
        video.frames.push_back(
            LoadImageBytes((*value)[i].get<std::string>(), limits_.media, frame_field));
      }
    } else if (value->is_string()) {
      video.field = part.Field(type);
      video.file = LoadVideoBytes(value->get<std::string>(), limits_.media, video.field);
    } else {
      const RequestObject video_url(*value, part.Field(type));
      video.field = video_url.Field("url");
      video.file = LoadVideoBytes(video_url.RequiredString("url"), limits_.media, video.field);
    }
    videos_->push_back(std::move(video));
    ChatPart out;
    out.kind = ChatPart::Kind::kVideo;
    return out;
  }

  // qwen-vl-utils' keys: a file's `fps` is the rate to sample at, a frame list's
  // `sample_fps`; `nframes`, `min_frames`, `max_frames` for both. Its `min_pixels` /
  // `max_pixels` bound each frame and `total_pixels` all frame pairs (frames / 2 x H x W,
  // so that a video token is 32 x 32 of it).
  void ParseVideoSampling(const RequestObject& part, bool frame_list, VideoInput* video) const {
    const char* rate_key = frame_list ? "sample_fps" : "fps";
    video->sample_fps = part.Number(rate_key, 0, 100, true).value_or(0);
    video->num_frames = part.Int("nframes", 2, 100000).value_or(0);
    video->min_frames = part.Int("min_frames", 1, 100000).value_or(0);
    video->max_frames = part.Int("max_frames", 2, 100000).value_or(0);
    if (video->sample_fps > 0 && video->num_frames > 0) {
      FailField(ErrorCode::kInvalidArgument, part.Field("nframes"), "and ", rate_key,
                " are mutually exclusive; give one");
    }
    if (video->min_frames > 0 && video->max_frames > 0 && video->min_frames > video->max_frames) {
      FailField(ErrorCode::kInvalidArgument, part.Field("min_frames"),
                "is larger than max_frames (", video->min_frames, " > ", video->max_frames, ")");
    }
    for (const char* key : {"resized_height", "resized_width"}) {
      if (part.Find(key) != nullptr) {
        FailField(ErrorCode::kInvalidArgument, part.Field(key),
                  "a fixed video frame size is not supported; bound it with max_pixels (per "
                  "frame) or total_pixels");
      }
    }
    VideoBudgetRequest& b = video->budget;
    b.min_frame_pixels = part.Int("min_pixels", 1, kMaxPixelBudget).value_or(0);
    b.max_frame_pixels = part.Int("max_pixels", 1, kMaxPixelBudget).value_or(0);
    if (b.min_frame_pixels > 0 && b.max_frame_pixels > 0 &&
        b.min_frame_pixels > b.max_frame_pixels) {
      FailField(ErrorCode::kInvalidArgument, part.Field("min_pixels"),
                "is larger than max_pixels (", b.min_frame_pixels, " > ", b.max_frame_pixels, ")");
    }
    if (part.Find("total_pixels") != nullptr) {
      if (limits_.pixels_per_image_token <= 0 || limits_.pixels_per_video_token <= 0) {
        Fail(ErrorCode::kInternal, "MessageLimits has no pixels per image or video token");
      }
      const int64_t frames_per_pair =
          limits_.pixels_per_video_token / limits_.pixels_per_image_token;
      if (auto v = part.Int("total_pixels", 1, kMaxPixelBudget / frames_per_pair)) {
        b.max_pixels = *v * frames_per_pair;
      }
    }
  }

  const MessageLimits& limits_;
  std::vector<ImageInput>* images_;
  std::vector<VideoInput>* videos_;
};

}  // namespace

bool IsUnreadablePartType(const std::string& type) {
  return type == "input_audio" || type == "audio" || type == "audio_url" || type == "file" ||
         type == "input_file";
}

void FailUnreadablePart(const RequestObject& part, const std::string& type) {
  FailField(ErrorCode::kInvalidArgument, part.Field("type"), "\"", type,
            "\" parts are not supported; qvl reads text and images");
}

void ParseToolCalls(const nlohmann::json& value, const std::string& field, const std::string& role,
                    std::vector<ChatToolCall>* calls) {
  RequireArray(value, field);
  if (!value.empty() && role != "assistant") {
    FailField(ErrorCode::kInvalidArgument, field, "only assistant messages can have tool calls");
  }
  for (size_t i = 0; i < value.size(); ++i) {
    const RequestObject call(value[i], IndexField(field, i));
    const nlohmann::json* function_value = call.Find("function");
    if (function_value == nullptr) {
      FailField(ErrorCode::kInvalidArgument, call.Field("function"), "is required");
    }
    const RequestObject function(*function_value, call.Field("function"));
    ChatToolCall out;
    out.name = function.RequiredString("name");
    out.arguments = ParseToolCallArguments(function);
    calls->push_back(std::move(out));
  }
}

std::string ParseChatRole(const RequestObject& message, size_t index) {
  const std::string role = message.RequiredString("role");
  if (role == "system" || role == "developer") {
    if (index != 0) {
      FailField(ErrorCode::kInvalidArgument, message.Field("role"),
                "a system message must be the first message");
    }
    return "system";
  }
  if (role == "user" || role == "assistant" || role == "tool") return role;
  FailField(ErrorCode::kInvalidArgument, message.Field("role"), "unknown role \"", role,
            "\"; use system, user, assistant or tool");
}

ChatPart TextPart(std::string text) {
  ChatPart part;
  part.kind = ChatPart::Kind::kText;
  part.text = std::move(text);
  return part;
}

void CheckImageRole(const std::string& role, const std::string& field) {
  if (role != "user" && role != "tool") {
    FailField(ErrorCode::kInvalidArgument, field,
              "images are only accepted in user and tool "
              "messages (the chat template drops them from ",
              role, " messages)");
  }
}

void CheckImagePart(const RequestObject& part, const std::string& role, const std::string& field) {
  CheckImageRole(role, field);
  for (const char* key : {"min_pixels", "max_pixels", "resized_height", "resized_width"}) {
    if (part.Find(key) != nullptr) {
      FailField(ErrorCode::kInvalidArgument, part.Field(key),
                "per-image sizes are not supported; set min_pixels / max_pixels (or "
                "min_image_tokens / max_image_tokens) at the top level of the request");
    }
  }
}

ImageDetail ParseImageDetail(const RequestObject& object) {
  const std::optional<std::string> name = object.String("detail");
  if (!name || *name == "auto") return ImageDetail::kAuto;
  if (*name == "low") return ImageDetail::kLow;
  if (*name == "high") return ImageDetail::kHigh;
  FailField(ErrorCode::kInvalidArgument, object.Field("detail"), "use auto, low or high, got \"",
            *name, "\"");
}

ChatPart AddImage(const std::string& url, std::string url_field, ImageDetail detail,
                  const MessageLimits& limits, std::vector<ImageInput>* images) {
  if (static_cast<int>(images->size()) >= limits.max_images) {
    FailField(ErrorCode::kInvalidArgument, url_field,
              "too many images: this server accepts at most ", limits.max_images, " per request");
  }
  ImageInput image;
  image.name = StrCat("image ", images->size() + 1);
  image.bytes = LoadImageBytes(url, limits.media, url_field);
  image.field = std::move(url_field);
  image.detail = detail;
  images->push_back(std::move(image));
  return ImagePart();
}

std::string ParseToolCallArguments(const RequestObject& function) {
  const nlohmann::json* arguments = function.Find("arguments");
  if (arguments == nullptr) return "{}";
  if (arguments->is_string()) return arguments->get<std::string>();
  if (arguments->is_object()) return arguments->dump();
  FailField(ErrorCode::kInvalidArgument, function.Field("arguments"),
            "expected a JSON string or object, got ", JsonKind(*arguments));
}

void ParseChatMessages(const nlohmann::json& value, const MessageLimits& limits,
                       std::vector<ChatMessage>* messages, std::vector<ImageInput>* images,
                       std::vector<VideoInput>* videos) {
  RequireArray(value, "messages");
  if (value.empty()) {
    FailField(ErrorCode::kInvalidArgument, "messages", "needs at least one message");
  }
  MessageParser parser(limits, images, videos);
  for (size_t i = 0; i < value.size(); ++i) messages->push_back(parser.Parse(value[i], i));
}

}  // namespace qvl
