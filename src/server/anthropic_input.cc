#include "server/anthropic_input.h"

#include <optional>
#include <string>
#include <utility>

#include "base/field_error.h"
#include "server/output_controls.h"
#include "text/template_json.h"

namespace qvl {
namespace {

constexpr char kReadBlocks[] =
    "qvl reads text, image, tool_use, tool_result, thinking and redacted_thinking blocks";

// Anthropic's prompt-cache mark: qvl's prefix cache finds shared prefixes by itself.
void CheckCacheControl(const RequestObject& block) {
  if (const nlohmann::json* mark = block.Find("cache_control")) {
    RequestObject(*mark, block.Field("cache_control"));
  }
}

// A block type qvl does not read: refused naming it.
[[noreturn]] void FailBlockType(const RequestObject& block, const std::string& type) {
  if (type == "document") {
    FailField(ErrorCode::kInvalidArgument, block.Field("type"),
              "documents are not supported; send their text in text blocks (", kReadBlocks, ")");
  }
  FailField(ErrorCode::kInvalidArgument, block.Field("type"), "\"", type,
            "\" blocks are not supported; ", kReadBlocks);
}

ChatPart ParseText(const RequestObject& block) {
  CheckCacheControl(block);
  if (const nlohmann::json* citations = block.Find("citations")) {
    RequireArray(*citations, block.Field("citations"));
  }
  return TextPart(block.RequiredString("text"));
}

// The text of `system`: a string or text blocks, joined as the Responses API joins
// instructions.
std::string SystemText(const nlohmann::json& system) {
  if (system.is_string()) return system.get<std::string>();
  if (!system.is_array()) {
    FailField(ErrorCode::kInvalidArgument, "system", "expected a string or text blocks, got ",
              JsonKind(system));
  }
  std::string text;
  for (size_t i = 0; i < system.size(); ++i) {
    const RequestObject block(system[i], IndexField("system", i));
    const std::string type = block.RequiredString("type");
    if (type != "text") {
      FailField(ErrorCode::kInvalidArgument, block.Field("type"), "\"", type,
                "\" blocks are not supported here; the system prompt is text blocks");
    }
    if (i > 0) text += "\n\n";
    text += ParseText(block).text;
  }
  return text;
}

class MessagesParser {
 public:
  MessagesParser(std::string_view text, const MessageLimits& limits,
                 std::vector<ImageInput>* images)
      : text_(text), limits_(limits), images_(images) {}

  // Appends the message at `index`: one chat message, or for a user message with tool
  // results a tool message for each and a user message with the rest.
  void Parse(const nlohmann::json& value, size_t index, std::vector<ChatMessage>* out) {
    const RequestObject message(value, IndexField("messages", index));
    const std::string role = message.RequiredString("role");
    if (role == "system") {
      FailField(ErrorCode::kInvalidArgument, message.Field("role"),
                "messages have no system role here; use the top-level system");
    }
    if (role != "user" && role != "assistant") {
      FailField(ErrorCode::kInvalidArgument, message.Field("role"), "unknown role \"", role,
                "\"; use user or assistant");
    }
    const nlohmann::json* content = message.Find("content");
    if (content == nullptr) {
      FailField(ErrorCode::kInvalidArgument, message.Field("content"), "is required");
    }
    ChatMessage turn;
    turn.role = role;
    if (content->is_string()) {
      turn.content_is_string = true;
      turn.parts.push_back(TextPart(content->get<std::string>()));
      out->push_back(std::move(turn));
      return;
    }
    if (!content->is_array()) {
      FailField(ErrorCode::kInvalidArgument, message.Field("content"),
                "expected a string or an array of content blocks, got ", JsonKind(*content));
    }
    bool tool_results = false;
    for (size_t j = 0; j < content->size(); ++j) {
      const RequestObject block((*content)[j], IndexField(message.Field("content"), j));
      const std::string type = block.RequiredString("type");
      if (type == "tool_result") {
        if (role != "user") {
          FailField(ErrorCode::kInvalidArgument, block.Field("type"),
                    "tool_result blocks belong to user messages");
        }
        out->push_back(ParseToolResult(block));
        tool_results = true;
        continue;
      }
      ParseBlock(block, type, index, j, &turn);
    }
    if (tool_results && turn.parts.empty()) return;
    // An assistant turn of tool calls alone is chat's assistant message with null content.
    turn.content_is_string = role == "assistant" && turn.parts.empty();
    out->push_back(std::move(turn));
  }

 private:
  // A block of a user or assistant message, but a tool_result, into `turn`.
  void ParseBlock(const RequestObject& block, const std::string& type, size_t index, size_t j,
                  ChatMessage* turn) {
    if (type == "text") {
      turn->parts.push_back(ParseText(block));
      return;
    }
    if (type == "image") {
      turn->parts.push_back(ParseImage(block, turn->role));
      return;
    }
    if (type != "tool_use" && type != "thinking" && type != "redacted_thinking") {
      FailBlockType(block, type);
    }
    if (turn->role != "assistant") {
      FailField(ErrorCode::kInvalidArgument, block.Field("type"), type,
                " blocks belong to assistant messages");
    }
    CheckCacheControl(block);
    if (type == "tool_use") {
      turn->tool_calls.push_back(ParseToolUse(block, index, j));
    } else if (type == "thinking") {
      block.String("signature");
      // An earlier answer's reasoning, as the encoder gave it (a Thinking model's).
      turn->reasoning = turn->reasoning.value_or("") + block.RequiredString("thinking");
    } else {
      block.RequiredString("data");  // encrypted reasoning that only Anthropic can read
    }
  }

  ChatPart ParseImage(const RequestObject& block, const std::string& role) {
    CheckImageRole(role, block.path());
    CheckCacheControl(block);
    const nlohmann::json* value = block.Find("source");
    if (value == nullptr)
      FailField(ErrorCode::kInvalidArgument, block.Field("source"), "is required");
    const RequestObject source(*value, block.Field("source"));
    const std::string type = source.RequiredString("type");
    if (type == "url") {
      return AddImage(source.RequiredString("url"), source.Field("url"), ImageDetail::kAuto,
                      limits_, images_);
    }
    if (type == "file") {
      FailField(ErrorCode::kInvalidArgument, source.Field("type"),
                "the Files API is not supported (qvl keeps no files); send the image as "
                "{\"type\": \"base64\", \"media_type\", \"data\"} or {\"type\": \"url\", \"url\"}");
    }
    if (type != "base64") {
      FailField(ErrorCode::kInvalidArgument, source.Field("type"), "\"", type,
                "\" is not an image source; use base64 or url");
    }
    const std::string media_type = source.RequiredString("media_type");
    if (media_type.rfind("image/", 0) != 0) {
      FailField(ErrorCode::kInvalidArgument, source.Field("media_type"), "\"", media_type,
                "\" is not an image type (image/jpeg, image/png, image/gif, image/webp)");
    }
    // The one loader checks size and base64 and names the field; TakeInlineMedia may have
    // left the payload empty, the bytes waiting under the field.
    return AddImage(StrCat("data:", media_type, ";base64,", source.RequiredString("data")),
                    source.Field("data"), ImageDetail::kAuto, limits_, images_);
  }

  // Its input is shown as the template's tojson shows an object: in the client's key
  // order, which the checked parse lost, so it is re-read from the body as sent.
  ChatToolCall ParseToolUse(const RequestObject& block, size_t index, size_t j) {
    block.RequiredString("id");
    ChatToolCall call;
    call.name = block.RequiredString("name");
    const nlohmann::json* input = block.Find("input");
    if (input == nullptr)
      FailField(ErrorCode::kInvalidArgument, block.Field("input"), "is required");
    if (!input->is_object()) {
      FailField(ErrorCode::kInvalidArgument, block.Field("input"), "expected an object, got ",
                JsonKind(*input));
    }
    if (!ordered_) ordered_ = OrderedRequestFields(text_, "messages");
    call.arguments =
        TemplateJson(ordered_->at("messages").at(index).at("content").at(j).at("input"));
    return call;
  }

  ChatMessage ParseToolResult(const RequestObject& block) {
    CheckCacheControl(block);
    block.RequiredString("tool_use_id");
    block.Bool("is_error");
    ChatMessage tool;
    tool.role = "tool";
    const nlohmann::json* content = block.Find("content");
    if (content == nullptr) {
      tool.content_is_string = true;
      return tool;
    }
    if (content->is_string()) {
      tool.content_is_string = true;
      tool.parts.push_back(TextPart(content->get<std::string>()));
      return tool;
    }
    if (!content->is_array()) {
      FailField(ErrorCode::kInvalidArgument, block.Field("content"),
                "expected a string or an array of text and image blocks, got ", JsonKind(*content));
    }
    for (size_t k = 0; k < content->size(); ++k) {
      const RequestObject inner((*content)[k], IndexField(block.Field("content"), k));
      const std::string type = inner.RequiredString("type");
      if (type == "text") {
        tool.parts.push_back(ParseText(inner));
      } else if (type == "image") {
        tool.parts.push_back(ParseImage(inner, tool.role));
      } else {
        FailField(ErrorCode::kInvalidArgument, inner.Field("type"), "\"", type,
                  "\" blocks are not supported in a tool result; qvl reads text and image "
                  "blocks");
      }
    }
    return tool;
  }

  std::string_view text_;
  const MessageLimits& limits_;
  std::vector<ImageInput>* images_;
  std::optional<nlohmann::ordered_json>
      ordered_;  // the body's messages, once a tool_use needs them
};

}  // namespace

void ParseAnthropicMessages(const RequestObject& body, std::string_view text,
                            const MessageLimits& limits, std::vector<ChatMessage>* messages,
                            std::vector<ImageInput>* images) {
  if (const nlohmann::json* system = body.Find("system")) {
    // An empty one is no system prompt, as Anthropic takes it.
    if (std::string text = SystemText(*system); !text.empty()) {
      ChatMessage turn;
      turn.role = "system";
      turn.content_is_string = true;
      turn.parts.push_back(TextPart(std::move(text)));
      messages->push_back(std::move(turn));
    }
  }
  const nlohmann::json* list = body.Find("messages");
  if (list == nullptr) FailField(ErrorCode::kInvalidArgument, "messages", "is required");
  RequireArray(*list, "messages");
  if (list->empty()) {
    FailField(ErrorCode::kInvalidArgument, "messages", "needs at least one message");
  }
  MessagesParser parser(text, limits, images);
  for (size_t i = 0; i < list->size(); ++i) parser.Parse((*list)[i], i, messages);
}

}  // namespace qvl
