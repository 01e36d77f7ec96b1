// The Qwen3-VL Instruct chat template, implemented directly instead of by a Jinja
// engine: RenderChatTemplate gives exactly the text transformers' apply_chat_template
// gives with the template in the model folder's chat_template.json, and
// CheckChatTemplate refuses a folder whose template is anything else.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace qvl {

struct ChatPart {
  enum class Kind { kText, kImage, kVideo };
  Kind kind = Kind::kText;
  std::string text;  // for kText
};

// One call of an assistant message ("tool_calls" of the OpenAI API).
struct ChatToolCall {
  std::string name;
  std::string arguments;  // JSON text, inserted verbatim (the API sends it as a string)
};

struct ChatMessage {
  std::string role;  // "system", "user", "assistant" or "tool"
  std::vector<ChatPart> parts;
  // The content was a string (one text part, or none when empty or null) rather than
  // a list of parts; the template treats the two differently in places.
  bool content_is_string = false;
  std::vector<ChatToolCall> tool_calls;  // assistant messages only
};

// Renders `messages` the way the template does:
//   <|im_start|>system\n...<|im_end|>\n   only when the first message is a system one
//   <|im_start|>user\n{parts}<|im_end|>\n  an image part is
//                                         <|vision_start|><|image_pad|><|vision_end|>,
//                                         a video part the same with <|video_pad|>
//   <|im_start|>assistant\n...<|im_end|>\n  (tool calls as <tool_call> blocks)
//   <|im_start|>user\n<tool_response>\n...\n</tool_response><|im_end|>\n  for tool
//                                         results, consecutive ones in one user turn
//   <|im_start|>assistant\n                 with add_generation_prompt
// `tools_json` are the tool definitions, each already serialized as the template's
// tojson does (Python json.dumps: ", " and ": " separators, non-ASCII kept); they go
// into the system turn. As in the template, a system message that is not first is
// dropped. Throws Error(kInvalidArgument) for an empty list, an unknown role, an image
// or video in a system or assistant message (the template would drop it) and tool calls
// outside an assistant message.
std::string RenderChatTemplate(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                               std::span<const std::string> tools_json = {});

// How one video appears in the prompt (Qwen3VLProcessor, fixtures README 7.5): per
// temporal group a "<{seconds:.1f} seconds>" timestamp, then
// <|vision_start|>, tokens_per_group <|video_pad|> tokens and <|vision_end|>.
struct VideoPromptLayout {
  std::vector<double> timestamps;  // seconds, one per temporal group
  int tokens_per_group = 0;
};

// The prompt tokens of a video besides its <|video_pad|> tokens: per temporal group its
// timestamp text and the <|vision_start|> and <|vision_end|> markers. Exact for every
// timestamp after the first (special tokens on both sides, so it is tokenized alone);
// the first may merge with the text just before the video, as any text does.
int64_t VideoTextTokens(const Tokenizer& tokenizer, std::span<const double> timestamps);

// The prompt's token ids: `rendered` is tokenized and its i-th <|image_pad|> repeated
// image_token_counts[i] times (the image's patches / 4); the i-th video placeholder
// <|vision_start|><|video_pad|><|vision_end|> becomes the groups of videos[i] (the
// timestamps are text, tokenized with their neighbours). Throws
// Error(kInvalidArgument) when the number of placeholders differs from the number of
// images or videos, or a count is below 1.
std::vector<int32_t> TokenizePrompt(const Tokenizer& tokenizer, const std::string& rendered,
                                    std::span<const int> image_token_counts,
                                    std::span<const VideoPromptLayout> videos = {});

struct ChatTemplateFile {
  std::string text;
  std::string path;  // the file it came from
};

// The chat template of a model folder, looked up where transformers looks:
// chat_template.jinja, chat_template.json ("chat_template"), then tokenizer_config.json
// ("chat_template", a string or a list of named templates). Throws Error(kNotFound)
// when there is none and Error(kCorrupt) naming the file when it is malformed.
ChatTemplateFile FindChatTemplate(const std::string& model_dir);

// Throws Error(kInvalidArgument) naming `source` unless `template_text` is the Qwen3-VL
// Instruct template that RenderChatTemplate implements (line endings and trailing
// whitespace aside).
void CheckChatTemplate(std::string_view template_text, const std::string& source);

// The ids config.json gives the vision markers; -1 for one it does not give.
struct VisionTokenIds {
  int32_t image_pad = -1;
  int32_t video_pad = -1;
  int32_t vision_start = -1;
  int32_t vision_end = -1;
};

// Checks that the tokenizer has every special token the template writes (<|im_start|>,
// <|im_end|>, the vision markers), each as one token: without them a prompt would be
// tokenized as plain text, and an image request refused as if the client were at fault.
// Throws Error(kCorrupt) naming `tokenizer_path` and the token when one is missing, and
// naming `config_path` and the field when config.json gives a marker another id than the
// tokenizer does.
void CheckTemplateTokens(const Tokenizer& tokenizer, const std::string& tokenizer_path,
                         const VisionTokenIds& config_ids, const std::string& config_path);

}  // namespace qvl
