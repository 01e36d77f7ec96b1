// Turns the engine's updates for one Anthropic Messages request (/v1/messages) into the
// bytes of its HTTP response: Anthropic's Message object, or the stream of server-sent
// events that builds it (message_start, content_block_start, content_block_delta with
// text_delta / thinking_delta / input_json_delta, content_block_stop, message_delta with
// the stop reason and usage, message_stop; an `error` event when the answer fails after
// the stream began). The answer's text becomes "text" blocks; with tools offered it goes
// through a ToolCallParser and each call becomes a "tool_use" block ({"id": "toolu_...",
// "name", "input": the arguments object}) in the order the model wrote them. A Thinking
// model's reasoning comes first as a "thinking" block. stop_reason: "end_turn",
// "max_tokens", "stop_sequence" (with stop_sequence, GenerationUpdate::stop) or
// "tool_use". usage counts input_tokens without the prompt tokens read from the prefix
// cache, which are cache_read_input_tokens, as Anthropic counts them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/request.h"
#include "server/response_encoder.h"
#include "server/tool_call_parser.h"
#include "text/reasoning_split.h"

namespace qvl {

struct AnthropicIdentity {
  std::string id;  // "msg_..." (NewCompletionId("msg_"))
  std::string model;
};

struct AnthropicEncoderOptions {
  bool stream = false;
  bool parse_tool_calls = false;
  bool split_reasoning = false;  // a Thinking model (ChatTemplateKind::kThinking)
};

class AnthropicEncoder : public ResponseEncoder {
 public:
  AnthropicEncoder(AnthropicIdentity identity, const AnthropicEncoderOptions& options);

  // "": streamed, message_start waits for the prompt's size (its usage.input_tokens,
  // which clients read there).
  std::string Start() override { return ""; }
  // Streamed: the events this update makes; the final one closes the open block and ends
  // with message_delta and message_stop. message_start and a ping come first, with the
  // prompt's counts from the first update that has them: a progress report (the request
  // asks for them, AnthropicRequest) or the final update; the events of updates before it
  // (an answer replayed from the shared cache has no progress) wait for it. Not streamed:
  // "" until the final update, then the Message JSON. An answer cut short by a shutdown or
  // an engine failure has no Message: streamed, it ends with an `error` event; not
  // streamed, the body is Anthropic's error object ({"type": "error", "error": {"type",
  // "message"}}), the status already sent being 200. Updates for a choice other than 0 are
  // ignored (the request has one answer).
  std::string Encode(GenerationUpdate&& update) override;
  bool finished() const override { return finished_; }
  // Once finished: the final update without its text (usage, timings, how it ended).
  const GenerationUpdate& summary() const override { return summary_; }

 private:
  enum class Block { kNone, kThinking, kText };

  void AddThinking(std::string_view text);
  void AddText(std::string_view text);
  void AppendToBlock(std::string_view text);
  void OpenBlock(Block kind);
  void CloseBlock();
  void AddCall(const ParsedToolCall& call);
  void Finish();
  void Emit(const char* type, nlohmann::json event);
  // Puts message_start, with `prompt`'s counts, and a ping before the events so far.
  void Announce(const Usage& prompt);
  // What the current call returns: nothing while message_start waits.
  std::string TakeEvents();

  AnthropicIdentity identity_;
  AnthropicEncoderOptions options_;
  ToolCallParser tools_;
  ToolCallParser::Output parsed_;  // reused for every update
  ReasoningSplitter splitter_;
  ReasoningSplitter::Output split_;  // reused for every update
  std::string clean_text_;           // the update's text, valid UTF-8
  // Whitespace not yet given to a text block: it joins one if more text follows, and is
  // dropped if a call or (with no text block open) the end follows.
  std::string held_;
  // The block being written, if any; its index is blocks_.
  Block open_ = Block::kNone;
  std::string block_text_;  // not streamed: the open block's text
  int64_t blocks_ = 0;      // the blocks closed so far
  bool called_ = false;     // a tool_use block was written
  // Not streamed: the blocks closed so far.
  nlohmann::json content_ = nlohmann::json::array();
  std::string events_;  // what the current call returns
  GenerationUpdate summary_;
  bool announced_ = false;  // message_start is written
  bool finished_ = false;
};

}  // namespace qvl
