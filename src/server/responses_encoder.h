// Turns the engine's updates for one /v1/responses request into the bytes of its HTTP
// response: OpenAI's Response object, or the stream of typed server-sent events that
// builds it (response.created, response.in_progress, qvl.prompt_progress events when
// asked, output_item.added, content_part.added, output_text.delta ... output_text.done,
// content_part.done, output_item.done, function_call_arguments.delta / .done for tool
// calls, and response.completed / response.incomplete / response.failed), each with its
// sequence_number. The answer's text becomes "message" output items; with tools offered
// it goes through a ToolCallParser and each call becomes a "function_call" item, in the
// order the model wrote them (text after a call is a new message). Text that is only
// whitespace makes no message, and whitespace between a message and a call (the
// template's separator) belongs to neither. A Thinking model's reasoning (up to
// "</think>") comes first as a "reasoning" item, {"type": "reasoning", "summary": [],
// "content": [{"type": "reasoning_text", "text"}]} as vLLM gives it, streamed as OpenAI's
// Responses API streams reasoning text (content_part.added, reasoning_text.delta ...
// reasoning_text.done, content_part.done); its tokens count as
// output_tokens_details.reasoning_tokens. qvl writes no summary of the reasoning, but
// clients that asked for one (reasoning.summary, in the echo) read the reasoning from
// "summary" only (the Vercel AI SDK, Codex, .NET's OpenAI chat client): for them the
// summary is the reasoning as written, one {"type": "summary_text", "text"}, as Ollama
// gives it, and "content" keeps it too (what a later request reads back). Streamed, it
// comes once, as a summary (reasoning_summary_part.added, reasoning_summary_text.delta
// ... .done, reasoning_summary_part.done), since clients that take both kinds of delta
// as reasoning would show it twice; output_item.done brings the whole item.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request.h"
#include "server/response_encoder.h"
#include "server/tool_call_parser.h"
#include "text/reasoning_split.h"

namespace qvl {

struct ResponsesIdentity {
  std::string id;          // "resp_..." (NewCompletionId("resp_"))
  int64_t created_at = 0;  // Unix seconds
  std::string model;
  // ResponsesRequest::echo: the settings the Response object repeats.
  nlohmann::json echo = nlohmann::json::object();
};

struct ResponsesEncoderOptions {
  bool stream = false;
  bool logprobs = false;
  bool parse_tool_calls = false;
  bool split_reasoning = false;  // a Thinking model (ChatTemplateKind::kThinking)
  // Streamed: updates with GenerationUpdate::progress become "qvl.prompt_progress" events
  // ({"prompt_progress": {...}} as chat's chunks carry it, llama-server's return_progress:
  // the Responses API has no event of its own for it); otherwise they write nothing.
  bool progress = false;
  // Called once with the final Response object of an answer that completed or reached its
  // limit (not of a failed one), before it is sent: the route keeps stored responses.
  std::function<void(const nlohmann::json& response)> on_done = nullptr;
};

class ResponsesEncoder : public ResponseEncoder {
 public:
  ResponsesEncoder(ResponsesIdentity identity, const ResponsesEncoderOptions& options);

  // Streamed: response.created and response.in_progress; else "".
  std::string Start() override;
  // Streamed: the events this update makes; the final one closes the open items and
  // ends with the terminal event carrying the whole response. Not streamed: "" until
  // the final update, then the Response JSON. An answer that stopped is "completed", one
  // that reached its token limit "incomplete" (max_output_tokens), one cut short by a
  // shutdown or an engine failure "failed" with the reason in error.message. Updates
  // for a choice other than 0 are ignored (the request has one answer).
  std::string Encode(GenerationUpdate&& update) override;
  bool finished() const override { return finished_; }
  // Once finished: the final update without its text (usage, timings, how it ended).
  const GenerationUpdate& summary() const override { return summary_; }

 private:
  enum class Status { kInProgress, kCompleted, kIncomplete, kFailed };

  void AddReasoning(std::string_view text);
  void CloseReasoning(const char* status);
  void AddText(std::string_view text);
  void AppendToMessage(std::string_view text);
  void OpenMessage();
  void CloseMessage(const char* status);
  void AddCall(const ParsedToolCall& call);
  void Finish();
  nlohmann::json ResponseJson(Status status) const;
  void Emit(const char* type, nlohmann::json event);

  ResponsesIdentity identity_;
  ResponsesEncoderOptions options_;
  ToolCallParser tools_;
  ToolCallParser::Output parsed_;  // reused for every update
  ReasoningSplitter splitter_;
  ReasoningSplitter::Output split_;  // reused for every update
  bool reasoning_summary_ = false;   // the reasoning is given as its summary too
  // The reasoning item being written, if any; its output_index is output_.size().
  bool reasoning_open_ = false;
  std::string reasoning_id_;
  std::string reasoning_text_;
  std::string clean_text_;                           // the update's text, valid UTF-8
  nlohmann::json output_ = nlohmann::json::array();  // the items closed so far
  // Whitespace not yet given to a message: it joins one if more text follows, and is
  // dropped if a call or (with no message open) the end follows.
  std::string held_;
  // Logprob entries of tokens whose text is not yet in a message.
  nlohmann::json pending_logprobs_ = nlohmann::json::array();
  // The message item being written, if any; its output_index is output_.size().
  bool message_open_ = false;
  std::string message_id_;
  std::string message_text_;
  nlohmann::json message_logprobs_ = nlohmann::json::array();
  int64_t sequence_number_ = 0;
  int64_t completed_at_ = 0;
  std::string events_;  // what the current call returns
  GenerationUpdate summary_;
  bool finished_ = false;
};

}  // namespace qvl
