#include "text/chat_template.h"

#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "text/reasoning_split.h"
#include "text/unicode.h"
#include "text/utf8.h"

namespace qvl {
namespace {

constexpr std::string_view kImagePlaceholder = "<|vision_start|><|image_pad|><|vision_end|>";
constexpr std::string_view kImagePad = "<|image_pad|>";
constexpr std::string_view kVideoPlaceholder = "<|vision_start|><|video_pad|><|vision_end|>";
constexpr std::string_view kVideoPad = "<|video_pad|>";
constexpr std::string_view kVisionStart = "<|vision_start|>";
constexpr std::string_view kVisionEnd = "<|vision_end|>";
constexpr std::string_view kThinkStart = "<think>";
// transformers' continue_final_message marker, "CONTINUE_FINAL_MESSAGE_TAG " (a space
// after it): appended to the final message's last text part before rendering, the prompt
// is cut where it lands.
constexpr std::string_view kContinueMark = "CONTINUE_FINAL_MESSAGE_TAG";

constexpr std::string_view kToolsPreamble =
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
constexpr std::string_view kToolsPostamble =
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": "
    "<function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n";

void CheckMessages(const std::vector<ChatMessage>& messages) {
  if (messages.empty()) Fail(ErrorCode::kInvalidArgument, "messages must not be empty");
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    const bool user_or_tool = m.role == "user" || m.role == "tool";
    if (!user_or_tool && m.role != "system" && m.role != "assistant") {
      Fail(ErrorCode::kInvalidArgument, "messages[", i, "].role \"", m.role,
           "\" is not one of system, user, assistant, tool");
    }
    for (const ChatPart& p : m.parts) {
      if (!user_or_tool && p.kind != ChatPart::Kind::kText) {
        Fail(ErrorCode::kInvalidArgument, "messages[", i, "] (", m.role,
             "): ", p.kind == ChatPart::Kind::kImage ? "images" : "videos",
             " are only allowed in user and tool messages");
      }
    }
    if (!m.tool_calls.empty() && m.role != "assistant") {
      Fail(ErrorCode::kInvalidArgument, "messages[", i, "] (", m.role,
           "): only assistant messages can have tool_calls");
    }
  }
}

// Text, image and video parts (user and tool messages).
void AppendParts(const ChatMessage& message, std::string* out) {
  for (const ChatPart& part : message.parts) {
    switch (part.kind) {
      case ChatPart::Kind::kText:
        out->append(part.text);
        break;
      case ChatPart::Kind::kImage:
        out->append(kImagePlaceholder);
        break;
      case ChatPart::Kind::kVideo:
        out->append(kVideoPlaceholder);
        break;
    }
  }
}

// What precedes a temporal group's vision block, as Qwen3VLProcessor writes it.
std::string TimestampText(double seconds) {
  char stamp[64];
  // printf's rounding of the binary value, as Python's f"{t:.1f}": 0.25 -> "0.2".
  std::snprintf(stamp, sizeof(stamp), "<%.1f seconds>", seconds);
  return stamp;
}

// Each video placeholder replaced by its groups, one <|video_pad|> per group (expanded
// in the ids later): "<0.2 seconds><|vision_start|><|video_pad|><|vision_end|>...".
std::string ExpandVideoPlaceholders(const std::string& rendered,
                                    std::span<const VideoPromptLayout> videos) {
  std::string out;
  size_t video = 0, from = 0;
  for (size_t at = rendered.find(kVideoPlaceholder); at != std::string::npos;
       at = rendered.find(kVideoPlaceholder, from)) {
    out.append(rendered, from, at - from);
    from = at + kVideoPlaceholder.size();
    if (video >= videos.size()) {
      Fail(ErrorCode::kInvalidArgument, "the prompt has more video placeholders than videos (",
           videos.size(), ")");
    }
    const VideoPromptLayout& layout = videos[video++];
    if (layout.timestamps.empty() || layout.tokens_per_group < 1) {
      Fail(ErrorCode::kInvalidArgument, "video ", video, " has ", layout.timestamps.size(),
           " groups of ", layout.tokens_per_group, " tokens; it needs at least 1 of 1");
    }
    for (const double seconds : layout.timestamps) {
      out.append(TimestampText(seconds)).append(kVisionStart).append(kVideoPad).append(kVisionEnd);
    }
  }
  out.append(rendered, from, std::string::npos);
  if (video != videos.size()) {
    Fail(ErrorCode::kInvalidArgument, "the prompt has ", video, " video placeholders but ",
         videos.size(), " videos");
  }
  return out;
}

// Jinja truthiness of message.content: a non-empty string or a non-empty list.
bool HasContent(const ChatMessage& message) {
  if (!message.content_is_string) return !message.parts.empty();
  return std::any_of(message.parts.begin(), message.parts.end(),
                     [](const ChatPart& p) { return !p.text.empty(); });
}

void AppendToolCalls(const ChatMessage& message, bool has_content, std::string* out) {
  for (size_t k = 0; k < message.tool_calls.size(); ++k) {
    if (k > 0 || has_content) out->push_back('\n');
    const ChatToolCall& call = message.tool_calls[k];
    out->append("<tool_call>\n{\"name\": \"").append(call.name).append("\", \"arguments\": ");
    out->append(call.arguments).append("}\n</tool_call>");
  }
}

void AppendAssistant(const ChatMessage& message, std::string* out) {
  out->append("<|im_start|>assistant\n");
  AppendParts(message, out);
  AppendToolCalls(message, HasContent(message), out);
  out->append("<|im_end|>\n");
}

// The text of a message as the Thinking template's render_content gives it.
std::string PartsText(const ChatMessage& message) {
  std::string text;
  AppendParts(message, &text);
  return text;
}

// Python's str.lstrip('\n') and rstrip('\n').
std::string_view LstripNewlines(std::string_view s) {
  const size_t from = s.find_first_not_of('\n');
  return from == std::string_view::npos ? std::string_view() : s.substr(from);
}
std::string_view RstripNewlines(std::string_view s) {
  const size_t end = s.find_last_not_of('\n');
  return end == std::string_view::npos ? std::string_view() : s.substr(0, end + 1);
}

// ns.last_query_index: the last user message that is not a tool response wrapped in a
// user turn by the client; the last message when there is none.
size_t LastQueryIndex(const std::vector<ChatMessage>& messages) {
  constexpr std::string_view kOpen = "<tool_response>", kClose = "</tool_response>";
  for (size_t i = messages.size(); i-- > 0;) {
    if (messages[i].role != "user") continue;
    const std::string text = PartsText(messages[i]);
    const std::string_view t = text;
    const bool tool_response = t.starts_with(kOpen) && t.ends_with(kClose);
    if (!tool_response) return i;
  }
  return messages.size() - 1;
}

void AppendThinkingAssistant(const ChatMessage& message, bool after_last_query, bool last,
                             std::string* out) {
  std::string content = PartsText(message);
  std::string reasoning;
  if (message.reasoning) {
    reasoning = *message.reasoning;
  } else if (const size_t close = content.find(kReasoningEnd); close != std::string::npos) {
    // content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n'), and
    // the content after the last '</think>'.
    std::string_view before = RstripNewlines(std::string_view(content).substr(0, close));
    if (const size_t open = before.rfind(kThinkStart); open != std::string_view::npos) {
      before.remove_prefix(open + kThinkStart.size());
    }
    reasoning = LstripNewlines(before);
    const size_t last_close = content.rfind(kReasoningEnd);
    content = std::string(
        LstripNewlines(std::string_view(content).substr(last_close + kReasoningEnd.size())));
  }
  out->append("<|im_start|>assistant\n");
  if (after_last_query && (last || !reasoning.empty())) {
    out->append(kThinkStart).append("\n");
    out->append(LstripNewlines(RstripNewlines(reasoning)));
    out->append("\n").append(kReasoningEnd).append(kReplySeparator);
    out->append(LstripNewlines(content));
  } else {
    out->append(content);
  }
  AppendToolCalls(message, !content.empty(), out);
  out->append("<|im_end|>\n");
}

// Both templates' system turn: the first message when it is a system one, with the tool
// definitions when there are any.
void AppendSystemTurn(const std::vector<ChatMessage>& messages,
                      std::span<const std::string> tools_json, std::string* out) {
  const bool system_first = messages[0].role == "system";
  if (!tools_json.empty()) {
    out->append("<|im_start|>system\n");
    if (system_first) {
      AppendParts(messages[0], out);
      out->append("\n\n");
    }
    out->append(kToolsPreamble);
    for (const std::string& tool : tools_json) out->append("\n").append(tool);
    out->append(kToolsPostamble);
  } else if (system_first) {
    out->append("<|im_start|>system\n");
    AppendParts(messages[0], out);
    out->append("<|im_end|>\n");
  }
}

// Consecutive tool results share one user turn.
void AppendToolResult(const std::vector<ChatMessage>& messages, size_t i, std::string* out) {
  if (i == 0 || messages[i - 1].role != "tool") out->append("<|im_start|>user");
  out->append("\n<tool_response>\n");
  AppendParts(messages[i], out);
  out->append("\n</tool_response>");
  if (i + 1 == messages.size() || messages[i + 1].role != "tool") out->append("<|im_end|>\n");
}

void AppendTurn(std::string_view role, const ChatMessage& message, std::string* out) {
  out->append("<|im_start|>").append(role).append("\n");
  AppendParts(message, out);
  out->append("<|im_end|>\n");
}

// Python's str.isspace: Unicode White_Space and the separators U+001C..U+001F.
bool IsPythonSpace(char32_t c) {
  const text::CharClass kind = text::ClassifyCodePoint(c);
  return kind == text::CharClass::kNewline || kind == text::CharClass::kSpace ||
         (c >= 0x1C && c <= 0x1F);
}

// Python's str.strip() of UTF-8 text.
std::string_view PythonStrip(std::string_view s) {
  size_t begin = s.size(), end = 0;
  for (size_t pos = 0; pos < s.size();) {
    const text::Utf8Sequence seq = text::ScanUtf8(s, pos);
    const bool space = seq.status == text::Utf8Status::kValid &&
                       IsPythonSpace(text::DecodeUtf8(s, pos, seq.length));
    if (!space) {
      begin = std::min(begin, pos);
      end = pos + seq.length;
    }
    pos += seq.length;
  }
  return begin < end ? s.substr(begin, end - begin) : std::string_view();
}

}  // namespace

std::string RenderChatTemplate(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                               std::span<const std::string> tools_json, ChatTemplateKind kind) {
  CheckMessages(messages);
  std::string out;
  AppendSystemTurn(messages, tools_json, &out);
  const bool thinking = kind == ChatTemplateKind::kThinking;
  const size_t last_query = thinking ? LastQueryIndex(messages) : 0;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& message = messages[i];
    if (message.role == "user") {
      AppendTurn("user", message, &out);
    } else if (message.role == "system") {
      // The Instruct template drops a system message that is not first.
      if (thinking && i > 0) AppendTurn("system", message, &out);
    } else if (message.role == "assistant") {
      if (thinking) {
        AppendThinkingAssistant(message, i > last_query, i + 1 == messages.size(), &out);
      } else {
        AppendAssistant(message, &out);
      }
    } else if (message.role == "tool") {
      AppendToolResult(messages, i, &out);
    }
  }
  if (add_generation_prompt) {
    out.append("<|im_start|>assistant\n");
    if (thinking) out.append(kThinkStart).append("\n");
  }
  return out;
}

std::string RenderContinuedChat(const std::vector<ChatMessage>& messages,
                                std::span<const std::string> tools_json, ChatTemplateKind kind) {
  CheckMessages(messages);
  const size_t last = messages.size() - 1;
  const ChatMessage& final_message = messages[last];
  if (final_message.role != "assistant") {
    Fail(ErrorCode::kInvalidArgument, "the last message, messages[", last, "], is a ",
         final_message.role, " one; only an assistant message can be continued");
  }
  if (!final_message.tool_calls.empty()) {
    Fail(ErrorCode::kInvalidArgument, "messages[", last,
         "] has tool_calls; only an assistant message's text can be continued");
  }
  if (PartsText(final_message).empty()) {
    Fail(ErrorCode::kInvalidArgument, "messages[", last,
         "] has no content: there is nothing to continue");
  }
  std::vector<ChatMessage> tagged = messages;
  // The last text part is the one continued (an assistant message has text parts only).
  std::string& text = tagged.back().parts.back().text;
  const std::string sent = text;
  text.append(kContinueMark).append(" ");
  const std::string rendered =
      RenderChatTemplate(tagged, /*add_generation_prompt=*/false, tools_json, kind);
  // transformers refuses a message the template does not write as it came: the Thinking
  // template takes the reasoning out of a "</think>" in the content and rewrites it.
  if (rendered.find(PythonStrip(sent)) == std::string::npos) {
    Fail(ErrorCode::kInvalidArgument, "messages[", last,
         "]: the chat template does not write its content as sent (it moves the reasoning "
         "before a \"</think>\" into a think block), so it cannot be continued; send the "
         "reasoning apart, as reasoning_content");
  }
  // Both templates write the content as it is, the tag's space included, then
  // "<|im_end|>": the prompt is everything before the tag.
  return rendered.substr(0, rendered.rfind(kContinueMark));
}

std::vector<int32_t> TokenizePrompt(const Tokenizer& tokenizer, const std::string& rendered,
                                    std::span<const int> image_token_counts,
                                    std::span<const VideoPromptLayout> videos) {
  const int32_t pad = tokenizer.TokenToId(kImagePad);
  if (pad < 0) Fail(ErrorCode::kInvalidArgument, "the tokenizer has no ", kImagePad, " token");
  const int32_t video_pad = tokenizer.TokenToId(kVideoPad);
  if (!videos.empty() && video_pad < 0) {
    Fail(ErrorCode::kInvalidArgument, "the tokenizer has no ", kVideoPad, " token");
  }
  for (size_t i = 0; i < image_token_counts.size(); ++i) {
    if (image_token_counts[i] < 1) {
      Fail(ErrorCode::kInvalidArgument, "image ", i, " has ", image_token_counts[i],
           " tokens; it needs at least 1");
    }
  }

  // <|image_pad|> and <|video_pad|> are added tokens, matched before anything else is
  // tokenized, so expanding them in the ids equals tokenizing the expanded text.
  const std::vector<int32_t> ids =
      tokenizer.Encode(videos.empty() && rendered.find(kVideoPlaceholder) == std::string::npos
                           ? rendered
                           : ExpandVideoPlaceholders(rendered, videos));
  const auto num_pads = static_cast<size_t>(std::count(ids.begin(), ids.end(), pad));
  if (num_pads != image_token_counts.size()) {
    Fail(ErrorCode::kInvalidArgument, "the prompt has ", num_pads, " ", kImagePad,
         " placeholders but ", image_token_counts.size(), " images");
  }
  size_t groups = 0;
  size_t total = ids.size() - num_pads;
  for (const int count : image_token_counts) total += static_cast<size_t>(count);
  for (const VideoPromptLayout& v : videos) {
    groups += v.timestamps.size();
    total += v.timestamps.size() * (static_cast<size_t>(v.tokens_per_group) - 1);
  }
  if (video_pad >= 0 &&
      static_cast<size_t>(std::count(ids.begin(), ids.end(), video_pad)) != groups) {
    Fail(ErrorCode::kInvalidArgument, "the prompt has ", kVideoPad,
         " tokens outside the videos' placeholders");
  }

  std::vector<int32_t> expanded;
  expanded.reserve(total);
  size_t image = 0, video = 0, group = 0;
  for (const int32_t id : ids) {
    if (id == pad) {
      expanded.insert(expanded.end(), static_cast<size_t>(image_token_counts[image++]), pad);
    } else if (id == video_pad) {
      expanded.insert(expanded.end(), static_cast<size_t>(videos[video].tokens_per_group),
                      video_pad);
      if (++group == videos[video].timestamps.size()) ++video, group = 0;
    } else {
      expanded.push_back(id);
    }
  }
  return expanded;
}

int64_t VideoTextTokens(const Tokenizer& tokenizer, std::span<const double> timestamps) {
  constexpr int64_t kMarkers = 2;  // <|vision_start|> and <|vision_end|>
  int64_t n = 0;
  for (const double seconds : timestamps) {
    n += static_cast<int64_t>(tokenizer.Encode(TimestampText(seconds)).size()) + kMarkers;
  }
  return n;
}

void CheckTemplateTokens(const Tokenizer& tokenizer, const std::string& tokenizer_path,
                         const VisionTokenIds& config_ids, const std::string& config_path) {
  const struct {
    std::string_view token;
    const char* config_field;  // nullptr: config.json does not name it
    int32_t config_id;
  } tokens[] = {
      {"<|im_start|>", nullptr, -1},
      {"<|im_end|>", nullptr, -1},
      {kVisionStart, "vision_start_token_id", config_ids.vision_start},
      {kVisionEnd, "vision_end_token_id", config_ids.vision_end},
      {kImagePad, "image_token_id", config_ids.image_pad},
      {kVideoPad, "video_token_id", config_ids.video_pad},
  };
  for (const auto& t : tokens) {
    const int32_t id = tokenizer.TokenToId(t.token);
    if (id < 0) {
      Fail(ErrorCode::kCorrupt, tokenizer_path, ": the added token ", t.token,
           " is missing (the Qwen3-VL chat template writes it)");
    }
    if (t.config_field != nullptr && t.config_id >= 0 && t.config_id != id) {
      Fail(ErrorCode::kCorrupt, config_path, ": ", t.config_field, " is ", t.config_id, ", but ",
           tokenizer_path, " has ", t.token, " as ", id);
    }
  }
}

}  // namespace qvl
