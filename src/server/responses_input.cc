#include "server/responses_input.h"

#include <optional>
#include <string>

#include "base/field_error.h"

namespace qvl {
namespace {

class InputParser {
 public:
  InputParser(const MessageLimits& limits, std::vector<ImageInput>* images)
      : limits_(limits), images_(images) {}

  void Parse(const RequestObject& body, const nlohmann::json* earlier,
             std::vector<ChatMessage>* messages) {
    if (std::optional<std::string> instructions = body.String("instructions")) {
      system_texts_.push_back(*std::move(instructions));
    }
    if (earlier != nullptr) {
      RequireArray(*earlier, "previous_response_id");
      for (size_t i = 0; i < earlier->size(); ++i) {
        ParseItem(RequestObject((*earlier)[i], IndexField("previous_response_id", i)));
      }
    }
    const nlohmann::json* input = body.Find("input");
    if (input == nullptr) FailField(ErrorCode::kInvalidArgument, "input", "is required");
    if (input->is_string()) {
      ChatMessage user;
      user.role = "user";
      user.content_is_string = true;
      user.parts.push_back(TextPart(input->get<std::string>()));
      turns_.push_back(std::move(user));
    } else {
      if (!input->is_array()) {
        FailField(ErrorCode::kInvalidArgument, "input",
                  "expected a string or an array of items, got ", JsonKind(*input));
      }
      if (input->empty()) FailField(ErrorCode::kInvalidArgument, "input", "has no items");
      for (size_t i = 0; i < input->size(); ++i) {
        ParseItem(RequestObject((*input)[i], IndexField("input", i)));
      }
    }
    if (!system_texts_.empty()) {
      ChatMessage system;
      system.role = "system";
      system.content_is_string = true;
      std::string text;
      for (size_t i = 0; i < system_texts_.size(); ++i) {
        if (i > 0) text += "\n\n";
        text += system_texts_[i];
      }
      system.parts.push_back(TextPart(std::move(text)));
      messages->push_back(std::move(system));
    }
    for (ChatMessage& turn : turns_) messages->push_back(std::move(turn));
  }

 private:
  void ParseItem(const RequestObject& item) {
    std::optional<std::string> type = item.String("type");
    if (!type) {
      if (item.Find("role") == nullptr) {
        FailField(ErrorCode::kInvalidArgument, item.Field("type"), "is required");
      }
      type = "message";
    }
    if (*type == "message") return ParseMessage(item);
    if (*type == "function_call") return ParseFunctionCall(item);
    if (*type == "function_call_output") return ParseFunctionCallOutput(item);
    if (*type == "reasoning") return ParseReasoning(item);
    if (*type == "item_reference") {
      FailField(ErrorCode::kInvalidArgument, item.Field("type"),
                "qvl does not look items up by id; send the item itself");
    }
    FailField(ErrorCode::kInvalidArgument, item.Field("type"), "\"", *type,
              "\" items are not supported; qvl reads message, reasoning, function_call "
              "and function_call_output items");
  }

  void ParseMessage(const RequestObject& item) {
    const std::string role = item.RequiredString("role");
    if (role == "system" || role == "developer") {
      if (!turns_.empty()) {
        FailField(ErrorCode::kInvalidArgument, item.Field("role"),
                  "a system message must come before every other item (the chat template "
                  "shows the system turn first only)");
      }
      // The template shows a system message's text parts one after the other.
      std::string text;
      for (const ChatPart& part : ParseContent(item, "system").parts) text += part.text;
      system_texts_.push_back(std::move(text));
      return;
    }
    if (role != "user" && role != "assistant") {
      FailField(ErrorCode::kInvalidArgument, item.Field("role"), "unknown role \"", role,
                "\"; use user, assistant, system or developer");
    }
    ChatMessage turn = ParseContent(item, role);
    if (role == "assistant" && OpenedByReasoning()) {
      turn.reasoning = std::move(turns_.back().reasoning);
      turns_.back() = std::move(turn);
      return;
    }
    turns_.push_back(std::move(turn));
  }

  // The last turn is an assistant one that only a reasoning item has written so far.
  bool OpenedByReasoning() const {
    return !turns_.empty() && turns_.back().role == "assistant" && turns_.back().reasoning &&
           turns_.back().parts.empty() && turns_.back().tool_calls.empty();
  }

  // A reasoning item (a Thinking model's, as qvl gives them) opens the assistant turn
  // that the message and calls after it join; the Thinking template shows its text as
  // that turn's reasoning, the Instruct one ignores it. Summaries are not the reasoning
  // the model wrote, so they are left out.
  void ParseReasoning(const RequestObject& item) {
    item.String("id");
    item.String("status");
    std::string text;
    if (const nlohmann::json* content = item.Find("content")) {
      RequireArray(*content, item.Field("content"));
      for (size_t i = 0; i < content->size(); ++i) {
        text += RequestObject((*content)[i], IndexField(item.Field("content"), i))
                    .RequiredString("text");
      }
    }
    ChatMessage assistant;
    assistant.role = "assistant";
    assistant.content_is_string = true;
    assistant.reasoning = std::move(text);
    turns_.push_back(std::move(assistant));
  }

  ChatMessage ParseContent(const RequestObject& item, const std::string& role) {
    ChatMessage out;
    out.role = role;
    const nlohmann::json* content = item.Find("content");
    if (content == nullptr) {
      FailField(ErrorCode::kInvalidArgument, item.Field("content"), "is required");
    }
    if (content->is_string()) {
      out.content_is_string = true;
      out.parts.push_back(TextPart(content->get<std::string>()));
      return out;
    }
    if (!content->is_array()) {
      FailField(ErrorCode::kInvalidArgument, item.Field("content"),
                "expected a string or an array of content parts, got ", JsonKind(*content));
    }
    for (size_t i = 0; i < content->size(); ++i) {
      out.parts.push_back(ParsePart((*content)[i], IndexField(item.Field("content"), i), role));
    }
    return out;
  }

  ChatPart ParsePart(const nlohmann::json& value, const std::string& field,
                     const std::string& role) {
    const RequestObject part(value, field);
    const std::string type = part.RequiredString("type");
    if (type == "input_text") return TextPart(part.RequiredString("text"));
    if (type == "output_text" || type == "refusal") {
      if (role != "assistant") {
        FailField(ErrorCode::kInvalidArgument, part.Field("type"), "\"", type,
                  "\" parts belong to assistant messages; use input_text");
      }
      if (type == "refusal") return TextPart(part.RequiredString("refusal"));
      for (const char* key : {"annotations", "logprobs"}) {
        if (const nlohmann::json* list = part.Find(key)) RequireArray(*list, part.Field(key));
      }
      return TextPart(part.RequiredString("text"));
    }
    if (type == "input_image") {
      CheckImagePart(part, role, field);
      if (part.Find("file_id") != nullptr) {
        FailField(ErrorCode::kInvalidArgument, part.Field("file_id"),
                  "qvl has no file store; send the image as image_url (a data: URL or an "
                  "http(s) URL)");
      }
      const std::string url = part.RequiredString("image_url");
      return AddImage(url, part.Field("image_url"), ParseImageDetail(part), limits_, images_);
    }
    if (IsUnreadablePartType(type)) FailUnreadablePart(part, type);
    FailField(ErrorCode::kInvalidArgument, part.Field("type"), "unknown content part type \"", type,
              "\"; use input_text, input_image, or in assistant messages output_text");
  }

  // Joins the assistant turn right before it (a message or earlier calls), as chat's
  // assistant message with tool_calls.
  void ParseFunctionCall(const RequestObject& item) {
    item.RequiredString("call_id");
    item.String("id");
    item.String("status");
    ChatToolCall call;
    call.name = item.RequiredString("name");
    call.arguments = ParseToolCallArguments(item);
    if (turns_.empty() || turns_.back().role != "assistant") {
      ChatMessage assistant;
      assistant.role = "assistant";
      assistant.content_is_string = true;
      turns_.push_back(std::move(assistant));
    }
    turns_.back().tool_calls.push_back(std::move(call));
  }

  void ParseFunctionCallOutput(const RequestObject& item) {
    item.RequiredString("call_id");
    item.String("id");
    item.String("status");
    const nlohmann::json* output = item.Find("output");
    if (output == nullptr) {
      FailField(ErrorCode::kInvalidArgument, item.Field("output"), "is required");
    }
    ChatMessage tool;
    tool.role = "tool";
    if (output->is_string()) {
      tool.content_is_string = true;
      tool.parts.push_back(TextPart(output->get<std::string>()));
    } else if (output->is_array()) {
      for (size_t i = 0; i < output->size(); ++i) {
        tool.parts.push_back(ParsePart((*output)[i], IndexField(item.Field("output"), i), "tool"));
      }
    } else {
      FailField(ErrorCode::kInvalidArgument, item.Field("output"),
                "expected a string or an array of input_text and input_image parts, got ",
                JsonKind(*output));
    }
    turns_.push_back(std::move(tool));
  }

  const MessageLimits& limits_;
  std::vector<ImageInput>* images_;
  std::vector<std::string> system_texts_;
  std::vector<ChatMessage> turns_;  // after the system turn
};

}  // namespace

void ParseResponsesInput(const RequestObject& body, const nlohmann::json* earlier,
                         const MessageLimits& limits, std::vector<ChatMessage>* messages,
                         std::vector<ImageInput>* images) {
  InputParser(limits, images).Parse(body, earlier, messages);
}

}  // namespace qvl
