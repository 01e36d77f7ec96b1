// The Qwen3-VL chat templates (Instruct and Thinking), implemented directly instead of
// by a Jinja engine: RenderChatTemplate gives exactly the text transformers'
// apply_chat_template gives with the template in the model folder's chat_template.json,
// and CheckChatTemplate tells which of the two a folder has and refuses anything else.
#pragma once

#include <cstdint>
#include <optional>
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
  // An assistant message's reasoning (OpenAI-compatible "reasoning_content", Ollama's
  // "thinking"); the Thinking template renders it, the Instruct one ignores it. Unset,
  // the Thinking template takes the reasoning from a "</think>" in the content.
  std::optional<std::string> reasoning;
};

// Which Qwen3-VL template a model folder has: one model family, two ways of prompting.
enum class ChatTemplateKind {
  kInstruct,
  // Qwen3-VL-*-Thinking: the generation prompt opens "<think>\n", so an answer is its
  // reasoning, "</think>", then the reply.
  kThinking,
};

// Renders `messages` the way the `kind` template does. The Instruct template:
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
// dropped. The Thinking template differs in three places: the generation prompt is
// "<|im_start|>assistant\n<think>\n"; a system message that is not first is rendered
// as a system turn; and an assistant message after the last user query (the last user
// message that is not a whole "<tool_response>...</tool_response>") shows its reasoning
// as "<think>\n{reasoning}\n</think>\n\n{content}" when it has some or is the last
// message, earlier ones only their content (a "<think>...</think>" in it cut off), with
// its tool calls after that content.
// Throws Error(kInvalidArgument) for an empty list, an unknown role, an image or video in
// a system or assistant message (the templates would drop it or render it where the
// model never saw one) and tool calls outside an assistant message.
std::string RenderChatTemplate(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                               std::span<const std::string> tools_json = {},
                               ChatTemplateKind kind = ChatTemplateKind::kInstruct);

// The prompt that continues the final message, an assistant one, as transformers'
// apply_chat_template(continue_final_message=True) gives it (vLLM's continue_final_message,
// Ollama's prefill): the chat rendered without the generation prompt and cut where the
// final message's content ends, so its "<|im_end|>" is not written and the answer
// continues its text. transformers marks the end of the content (the last text part) and
// cuts at the mark; both templates write the content as it is, so the prompt is the closed
// rendering without the final "<|im_end|>\n". A Thinking model's final message shows its
// reasoning closed ("<think>\n...\n</think>\n\n{content}") when it follows the last user
// query, so what the model writes next is reply, never reasoning.
// Throws Error(kInvalidArgument) as RenderChatTemplate does, and when the last message is
// not an assistant one, has tool calls or has no text (nothing to continue), or, as
// transformers does, when the template does not write that text as sent (the Thinking
// template rewrites a content holding "</think>" unless it is already in its form).
std::string RenderContinuedChat(const std::vector<ChatMessage>& messages,
                                std::span<const std::string> tools_json = {},
                                ChatTemplateKind kind = ChatTemplateKind::kInstruct);

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

// Which of the Qwen3-VL templates RenderChatTemplate implements `template_text` is (line
// endings and trailing whitespace aside): the one place that decides how a folder is
// prompted. Throws Error(kInvalidArgument) naming `source` when it is neither.
ChatTemplateKind CheckChatTemplate(std::string_view template_text, const std::string& source);

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
