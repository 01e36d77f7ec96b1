#include "server/responses_encoder.h"

#include <chrono>
#include <utility>

#include "server/openai_format.h"
#include "text/utf8.h"

namespace qvl {
namespace {

constexpr char kWhitespace[] = " \t\r\n";

nlohmann::json ResponsesUsageJson(const Usage& usage) {
  return {{"input_tokens", usage.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", usage.cached_tokens}}},
          {"output_tokens", usage.completion_tokens},
          {"output_tokens_details", {{"reasoning_tokens", usage.reasoning_tokens}}},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens}};
}

int64_t UnixSecondsNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

nlohmann::json TextPart(std::string text, nlohmann::json logprobs) {
  return {{"type", "output_text"},
          {"text", std::move(text)},
          {"annotations", nlohmann::json::array()},
          {"logprobs", std::move(logprobs)}};
}

nlohmann::json ReasoningPart(std::string text) {
  return {{"type", "reasoning_text"}, {"text", std::move(text)}};
}

nlohmann::json SummaryPart(std::string text) {
  return {{"type", "summary_text"}, {"text", std::move(text)}};
}

// Whether the request asked for the reasoning's summary (ResponsesRequest::echo).
bool AsksForSummary(const nlohmann::json& echo) {
  const auto reasoning = echo.find("reasoning");
  if (reasoning == echo.end() || !reasoning->is_object()) return false;
  const auto summary = reasoning->find("summary");
  return summary != reasoning->end() && summary->is_string();
}

nlohmann::json ReasoningItem(const std::string& id, nlohmann::json content) {
  return {{"id", id},
          {"type", "reasoning"},
          {"summary", nlohmann::json::array()},
          {"content", std::move(content)}};
}

nlohmann::json InProgress(nlohmann::json item) {
  item["status"] = "in_progress";
  return item;
}

nlohmann::json CallItem(const std::string& id, const ParsedToolCall& call, const char* status,
                        const std::string& arguments) {
  return {{"id", id},           {"type", "function_call"}, {"status", status},
          {"call_id", call.id}, {"name", call.name},       {"arguments", arguments}};
}

}  // namespace

ResponsesEncoder::ResponsesEncoder(ResponsesIdentity identity,
                                   const ResponsesEncoderOptions& options)
    : identity_(std::move(identity)), options_(options) {
  if (!identity_.echo.is_object()) identity_.echo = nlohmann::json::object();
  reasoning_summary_ = AsksForSummary(identity_.echo);
}

void ResponsesEncoder::Emit(const char* type, nlohmann::json event) {
  event["type"] = type;
  event["sequence_number"] = sequence_number_++;
  events_ += SseEvent(type, event);
}

std::string ResponsesEncoder::Start() {
  if (!options_.stream) return "";
  events_.clear();
  nlohmann::json response = ResponseJson(Status::kInProgress);
  Emit("response.created", {{"response", response}});
  Emit("response.in_progress", {{"response", std::move(response)}});
  return std::move(events_);
}

std::string ResponsesEncoder::Encode(GenerationUpdate&& update) {
  if (finished_ || update.choice != 0) return "";
  events_.clear();
  if (update.progress) {
    if (options_.stream && options_.progress) {
      Emit("qvl.prompt_progress", {{"prompt_progress", PromptProgressJson(*update.progress)}});
    }
    return std::move(events_);
  }
  if (options_.logprobs) AppendLogprobEntries(update.tokens, &pending_logprobs_);
  clean_text_.clear();
  text::AppendReplacingInvalidUtf8(update.text, &clean_text_);
  if (options_.split_reasoning) {
    split_.reasoning.clear();
    split_.content.clear();
    splitter_.Feed(clean_text_, &split_);
    if (update.finished) splitter_.Finish(&split_);
    AddReasoning(split_.reasoning);
    if (reasoning_open_ && splitter_.answering()) CloseReasoning("completed");
    clean_text_.swap(split_.content);
  }
  if (options_.parse_tool_calls) {
    tools_.FeedInOrder(
        clean_text_, update.finished, &parsed_, [this](std::string_view text) { AddText(text); },
        [this](const ParsedToolCall& call) { AddCall(call); });
  } else if (!clean_text_.empty()) {
    // Without tools the message is the model's text as written, whitespace and all.
    if (!message_open_) OpenMessage();
    AppendToMessage(clean_text_);
  }
  if (update.finished) {
    summary_ = std::move(update);
    summary_.text.clear();
    summary_.tokens.clear();
    Finish();
  }
  return std::move(events_);
}

// The tokens of the reasoning have no place in a message's logprobs.
void ResponsesEncoder::AddReasoning(std::string_view text) {
  if (text.empty()) return;
  pending_logprobs_ = nlohmann::json::array();
  const int64_t index = static_cast<int64_t>(output_.size());
  if (!reasoning_open_) {
    reasoning_open_ = true;
    reasoning_id_ = NewCompletionId("rs_");
    reasoning_text_.clear();
    if (options_.stream) {
      Emit("response.output_item.added",
           {{"output_index", index},
            {"item", InProgress(ReasoningItem(reasoning_id_, nlohmann::json::array()))}});
      if (reasoning_summary_) {
        Emit("response.reasoning_summary_part.added", {{"item_id", reasoning_id_},
                                                       {"output_index", index},
                                                       {"summary_index", 0},
                                                       {"part", SummaryPart("")}});
      } else {
        Emit("response.content_part.added", {{"item_id", reasoning_id_},
                                             {"output_index", index},
                                             {"content_index", 0},
                                             {"part", ReasoningPart("")}});
      }
    }
  }
  reasoning_text_.append(text);
  if (!options_.stream) return;
  if (reasoning_summary_) {
    Emit("response.reasoning_summary_text.delta", {{"item_id", reasoning_id_},
                                                   {"output_index", index},
                                                   {"summary_index", 0},
                                                   {"delta", text}});
  } else {
    Emit("response.reasoning_text.delta", {{"item_id", reasoning_id_},
                                           {"output_index", index},
                                           {"content_index", 0},
                                           {"delta", text}});
  }
}

void ResponsesEncoder::CloseReasoning(const char* status) {
  reasoning_open_ = false;
  const std::string text = std::exchange(reasoning_text_, {});
  nlohmann::json item = ReasoningItem(reasoning_id_, nlohmann::json::array({ReasoningPart(text)}));
  if (reasoning_summary_) item["summary"].push_back(SummaryPart(text));
  item["status"] = status;
  if (options_.stream) {
    const int64_t index = static_cast<int64_t>(output_.size());
    if (reasoning_summary_) {
      Emit("response.reasoning_summary_text.done", {{"item_id", reasoning_id_},
                                                    {"output_index", index},
                                                    {"summary_index", 0},
                                                    {"text", text}});
      Emit("response.reasoning_summary_part.done", {{"item_id", reasoning_id_},
                                                    {"output_index", index},
                                                    {"summary_index", 0},
                                                    {"part", SummaryPart(text)}});
    } else {
      Emit("response.reasoning_text.done", {{"item_id", reasoning_id_},
                                            {"output_index", index},
                                            {"content_index", 0},
                                            {"text", text}});
      Emit("response.content_part.done", {{"item_id", reasoning_id_},
                                          {"output_index", index},
                                          {"content_index", 0},
                                          {"part", ReasoningPart(text)}});
    }
    Emit("response.output_item.done", {{"output_index", index}, {"item", item}});
  }
  output_.push_back(std::move(item));
}

void ResponsesEncoder::AddText(std::string_view text) {
  held_.append(text);
  const size_t last = held_.find_last_not_of(kWhitespace);
  if (last == std::string::npos) return;
  size_t first = 0;
  if (!message_open_) {
    // A message opens only after a call or at the start; after a call, the whitespace
    // in between is the call's separator.
    if (!output_.empty()) first = held_.find_first_not_of(kWhitespace);
    OpenMessage();
  }
  // Trailing whitespace waits: if a call follows, it is that call's separator.
  AppendToMessage(std::string_view(held_).substr(first, last + 1 - first));
  held_.erase(0, last + 1);
}

void ResponsesEncoder::OpenMessage() {
  message_open_ = true;
  message_id_ = NewCompletionId("msg_");
  message_text_.clear();
  message_logprobs_ = nlohmann::json::array();
  if (!options_.stream) return;
  const int64_t index = static_cast<int64_t>(output_.size());
  Emit("response.output_item.added", {{"output_index", index},
                                      {"item",
                                       {{"id", message_id_},
                                        {"type", "message"},
                                        {"status", "in_progress"},
                                        {"role", "assistant"},
                                        {"content", nlohmann::json::array()}}}});
  Emit("response.content_part.added", {{"item_id", message_id_},
                                       {"output_index", index},
                                       {"content_index", 0},
                                       {"part", TextPart("", nlohmann::json::array())}});
}

// An update's logprobs go with the first text it gives the message (with tools, the
// tokens of a call's markup and its separating whitespace belong to no text).
void ResponsesEncoder::AppendToMessage(std::string_view text) {
  message_text_.append(text);
  if (options_.stream) {
    Emit("response.output_text.delta", {{"item_id", message_id_},
                                        {"output_index", static_cast<int64_t>(output_.size())},
                                        {"content_index", 0},
                                        {"delta", text},
                                        {"logprobs", pending_logprobs_}});
  }
  for (nlohmann::json& entry : pending_logprobs_) message_logprobs_.push_back(std::move(entry));
  pending_logprobs_ = nlohmann::json::array();
}

void ResponsesEncoder::CloseMessage(const char* status) {
  message_open_ = false;
  nlohmann::json item = {{"id", message_id_},
                         {"type", "message"},
                         {"status", status},
                         {"role", "assistant"},
                         {"content", nlohmann::json::array()}};
  nlohmann::json part = TextPart(std::move(message_text_), std::move(message_logprobs_));
  message_text_.clear();
  message_logprobs_ = nlohmann::json::array();
  if (options_.stream) {
    const int64_t index = static_cast<int64_t>(output_.size());
    Emit("response.output_text.done", {{"item_id", message_id_},
                                       {"output_index", index},
                                       {"content_index", 0},
                                       {"text", part["text"]},
                                       {"logprobs", part["logprobs"]}});
    Emit("response.content_part.done",
         {{"item_id", message_id_}, {"output_index", index}, {"content_index", 0}, {"part", part}});
    item["content"].push_back(std::move(part));
    Emit("response.output_item.done", {{"output_index", index}, {"item", item}});
  } else {
    item["content"].push_back(std::move(part));
  }
  output_.push_back(std::move(item));
}

void ResponsesEncoder::AddCall(const ParsedToolCall& call) {
  if (message_open_) CloseMessage("completed");
  held_.clear();
  pending_logprobs_ = nlohmann::json::array();
  const std::string id = NewCompletionId("fc_");
  nlohmann::json item = CallItem(id, call, "completed", call.arguments);
  if (options_.stream) {
    const int64_t index = static_cast<int64_t>(output_.size());
    Emit("response.output_item.added",
         {{"output_index", index}, {"item", CallItem(id, call, "in_progress", "")}});
    // The parser gives whole calls, so the arguments arrive in one delta.
    Emit("response.function_call_arguments.delta",
         {{"item_id", id}, {"output_index", index}, {"delta", call.arguments}});
    Emit("response.function_call_arguments.done", {{"item_id", id},
                                                   {"output_index", index},
                                                   {"name", call.name},
                                                   {"arguments", call.arguments}});
    Emit("response.output_item.done", {{"output_index", index}, {"item", item}});
  }
  output_.push_back(std::move(item));
}

void ResponsesEncoder::Finish() {
  finished_ = true;
  Status status = Status::kCompleted;
  if (summary_.finish_reason == FinishReason::kLength) status = Status::kIncomplete;
  if (!CutShortReason(summary_).empty()) status = Status::kFailed;
  if (status == Status::kCompleted) completed_at_ = UnixSecondsNow();
  if (reasoning_open_) CloseReasoning(status == Status::kCompleted ? "completed" : "incomplete");
  if (message_open_) {
    // Trailing whitespace of the answer is its text; so are tokens still without text.
    if (!held_.empty() || !pending_logprobs_.empty()) AppendToMessage(held_);
    CloseMessage(status == Status::kCompleted ? "completed" : "incomplete");
  }
  held_.clear();
  nlohmann::json response = ResponseJson(status);
  if (options_.on_done && status != Status::kFailed) options_.on_done(response);
  if (!options_.stream) {
    events_ = JsonText(response);
    return;
  }
  const char* type = status == Status::kCompleted    ? "response.completed"
                     : status == Status::kIncomplete ? "response.incomplete"
                                                     : "response.failed";
  Emit(type, {{"response", std::move(response)}});
}

nlohmann::json ResponsesEncoder::ResponseJson(Status status) const {
  nlohmann::json response = identity_.echo;
  response["id"] = identity_.id;
  response["object"] = "response";
  response["created_at"] = identity_.created_at;
  response["model"] = identity_.model;
  response["output"] = output_;
  response["completed_at"] = nullptr;
  response["error"] = nullptr;
  response["incomplete_details"] = nullptr;
  response["usage"] = nullptr;
  switch (status) {
    case Status::kInProgress:
      response["status"] = "in_progress";
      return response;
    case Status::kCompleted:
      response["status"] = "completed";
      response["completed_at"] = completed_at_;
      break;
    case Status::kIncomplete:
      response["status"] = "incomplete";
      response["incomplete_details"] = {{"reason", "max_output_tokens"}};
      break;
    case Status::kFailed:
      response["status"] = "failed";
      response["error"] = {{"code", "server_error"}, {"message", CutShortReason(summary_)}};
      break;
  }
  response["usage"] = ResponsesUsageJson(summary_.usage);
  response["timings"] = TimingsJson(summary_.timings, upload_ms_);
  return response;
}

}  // namespace qvl
