// Turns the engine's updates for one Ollama request (/api/chat, /api/generate) into the
// bytes of its HTTP response: newline-delimited JSON objects while streaming (one per
// piece of text, {"model", "created_at", "message": {"role", "content"}, "done": false}
// for chat, "response" instead of "message" for generate), then the final object with
// "done": true, "done_reason" and Ollama's counts and durations (nanoseconds:
// total_duration, load_duration, prompt_eval_count, prompt_eval_duration, eval_count,
// eval_duration); not streaming, that final object alone holding the whole answer. With
// tools offered (chat only) the text goes through a ToolCallParser and calls arrive as
// message.tool_calls [{"function": {"name", "arguments": {...}}}]: streamed, each in a
// line of its own when the parser completes it, in order with the text around it. An
// answer cut short (shutdown, engine failure) ends with {"error": "<reason>"} instead of
// the final object, as Ollama reports an error mid-stream. A Thinking model's reasoning
// (up to "</think>") is "thinking" beside the content, as Ollama gives a thinking
// model's: message.thinking for chat, a top-level "thinking" for generate. With logprobs,
// an object carries "logprobs": [{"token", "logprob", "bytes", "top_logprobs": [...]}]
// for the answer's tokens it is the first to follow (not streamed, the final object for
// all of them), as Ollama's does.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/request.h"
#include "server/openai_format.h"
#include "server/response_encoder.h"
#include "server/tool_call_parser.h"
#include "text/reasoning_split.h"

namespace qvl {

enum class OllamaApi { kChat, kGenerate };

struct OllamaEncoderOptions {
  OllamaApi api = OllamaApi::kChat;
  std::string model;  // as the request named it
  bool stream = true;
  bool parse_tool_calls = false;  // ignored for generate, which has no tools
  bool split_reasoning = false;   // a Thinking model (ChatTemplateKind::kThinking)
  bool logprobs = false;          // the request asked for them (top_logprobs >= 0)
};

class OllamaEncoder : public ResponseEncoder {
 public:
  explicit OllamaEncoder(OllamaEncoderOptions options);

  // Nothing: Ollama's stream starts with the first piece of text.
  std::string Start() override;
  // Streamed: a line per piece of text or tool call, and after the final update the
  // final object (or the error object). Not streamed: "" until the final update, then
  // the whole body. Updates for a choice other than 0 are ignored (one answer).
  std::string Encode(GenerationUpdate&& update) override;
  bool finished() const override { return finished_; }
  // Once finished: the final update without its text (usage, timings, how it ended).
  const GenerationUpdate& summary() const override { return summary_; }
  std::string_view ContentType(bool stream) const override;
  // The whole body for a request with nothing to answer (no prompt, no messages), which
  // Ollama clients send to load the model: the final object with empty text and
  // done_reason "load" (qvl's model is always loaded).
  std::string LoadReply() const;

 private:
  void AddThinking(std::string_view text);
  void AddText(std::string_view text);
  void AddContent(std::string_view text);
  void AddCall(const ParsedToolCall& call);
  void Finish();
  // {"model", "created_at"}: what every object starts with.
  nlohmann::json Header() const;
  // The chat "message" object or the generate "response" text, set into `object`, with
  // `thinking` when it is not empty.
  void SetAnswer(std::string_view content, nlohmann::json tool_calls, nlohmann::json* object,
                 std::string_view thinking = {}) const;
  // Writes a line (streamed), with the logprobs of the tokens no line carried yet.
  void EmitLine(nlohmann::json object);

  OllamaEncoderOptions options_;
  bool parse_tool_calls_ = false;
  ToolCallParser tools_;
  ToolCallParser::Output parsed_;  // reused for every update
  ReasoningSplitter splitter_;
  ReasoningSplitter::Output split_;  // reused for every update
  std::string clean_text_;           // the update's text, valid UTF-8
  // With tools, whitespace not yet given out as content: it is content only if more
  // text follows it, or if it ends an answer whose last part is text. Before a call, or
  // between calls, it is the template's separator and dropped.
  std::string held_;
  bool calls_seen_ = false;
  bool wrote_content_ = false;       // some text was given out
  bool content_since_call_ = false;  // text was given out since the last call
  // Not streamed: the answer so far.
  std::string thinking_;
  std::string content_;
  nlohmann::json tool_calls_ = nlohmann::json::array();
  // Entries of the tokens not yet written (streamed), or of all of them (not streamed).
  nlohmann::json logprobs_ = nlohmann::json::array();
  std::string out_;  // what the current call returns
  GenerationUpdate summary_;
  bool finished_ = false;
};

}  // namespace qvl
