// Turns the engine's updates for one Ollama request (/api/chat, /api/generate) into the
// bytes of its HTTP response: newline-delimited JSON objects while streaming (one per
// piece of text, {"model", "created_at", "message": {"role", "content"}, "done": false}
// for chat, "response" instead of "message" for generate), then the final object with
// "done": true, "done_reason" and Ollama's counts and durations (nanoseconds:
// total_duration, load_duration, prompt_eval_count, prompt_eval_duration, eval_count,
// eval_duration); not streaming, that final object alone holding the whole answer. With
// tools offered the text goes through a ToolCallParser and calls arrive as
// message.tool_calls [{"function": {"name", "arguments": {...}}}].
#pragma once

#include <string>
#include <string_view>

#include "engine/request.h"
#include "server/response_encoder.h"
#include "server/tool_call_parser.h"

namespace qvl {

enum class OllamaApi { kChat, kGenerate };

struct OllamaEncoderOptions {
  OllamaApi api = OllamaApi::kChat;
  std::string model;  // as the request named it
  bool stream = true;
  bool parse_tool_calls = false;
};

class OllamaEncoder : public ResponseEncoder {
 public:
  explicit OllamaEncoder(OllamaEncoderOptions options);

  std::string Start() override;
  std::string Encode(GenerationUpdate&& update) override;
  bool finished() const override { return finished_; }
  const GenerationUpdate& summary() const override { return summary_; }
  std::string_view ContentType(bool stream) const override;

 private:
  OllamaEncoderOptions options_;
  GenerationUpdate summary_;
  bool finished_ = false;
};

}  // namespace qvl
