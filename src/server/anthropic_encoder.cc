#include "server/anthropic_encoder.h"

#include <utility>

#include "server/api_error.h"
#include "server/openai_format.h"
#include "text/utf8.h"

namespace qvl {
namespace {

constexpr char kWhitespace[] = " \t\r\n";

// Anthropic counts the prompt tokens read from its cache apart from input_tokens; qvl's
// prefix cache is that cache, and it writes no tokens a client pays for differently.
nlohmann::json UsageObject(const Usage& usage) {
  return {{"input_tokens", usage.prompt_tokens - usage.cached_tokens},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", usage.cached_tokens},
          {"output_tokens", usage.completion_tokens}};
}

nlohmann::json MessageObject(const AnthropicIdentity& identity, nlohmann::json content,
                             nlohmann::json stop_reason, nlohmann::json stop_sequence,
                             nlohmann::json usage) {
  return {{"id", identity.id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", identity.model},
          {"content", std::move(content)},
          {"stop_reason", std::move(stop_reason)},
          {"stop_sequence", std::move(stop_sequence)},
          {"usage", std::move(usage)}};
}

// A tool_use block's input is an object. The parser gives the JSON text the model wrote;
// arguments that are no object (a bare string, an array) leave the call with an empty
// input, as Ollama's encoder does.
// A call wins over a stop string, as the answer's last word is the call the client must
// run.
const char* StopReason(const GenerationUpdate& final_update, bool called) {
  if (called) return "tool_use";
  if (!final_update.stop.empty()) return "stop_sequence";
  return final_update.finish_reason == FinishReason::kLength ? "max_tokens" : "end_turn";
}

}  // namespace

AnthropicEncoder::AnthropicEncoder(AnthropicIdentity identity,
                                   const AnthropicEncoderOptions& options)
    : identity_(std::move(identity)), options_(options) {}

void AnthropicEncoder::Emit(const char* type, nlohmann::json event) {
  event["type"] = type;
  events_ += SseEvent(type, event);
}

void AnthropicEncoder::Announce(const Usage& prompt) {
  std::string held = std::move(events_);
  events_.clear();
  Usage counts = prompt;
  counts.completion_tokens = 0;
  Emit("message_start", {{"message", MessageObject(identity_, nlohmann::json::array(), nullptr,
                                                   nullptr, UsageObject(counts))}});
  Emit("ping", nlohmann::json::object());
  events_ += held;
  announced_ = true;
}

std::string AnthropicEncoder::TakeEvents() {
  if (options_.stream && !announced_) return "";
  return std::move(events_);
}

std::string AnthropicEncoder::Encode(GenerationUpdate&& update) {
  if (finished_ || update.choice != 0) return "";
  // Until message_start is written the events gather.
  if (announced_ || !options_.stream) events_.clear();
  if (update.progress) {
    if (options_.stream && !announced_) {
      Usage prompt;
      prompt.prompt_tokens = update.progress->total;
      prompt.cached_tokens = update.progress->cached;
      Announce(prompt);
    }
    return TakeEvents();
  }
  clean_text_.clear();
  text::AppendReplacingInvalidUtf8(update.text, &clean_text_);
  if (options_.split_reasoning) {
    split_.reasoning.clear();
    split_.content.clear();
    splitter_.Feed(clean_text_, &split_);
    if (update.finished) splitter_.Finish(&split_);
    AddThinking(split_.reasoning);
    if (open_ == Block::kThinking && splitter_.answering()) CloseBlock();
    clean_text_.swap(split_.content);
  }
  if (options_.parse_tool_calls) {
    tools_.FeedInOrder(
        clean_text_, update.finished, &parsed_, [this](std::string_view text) { AddText(text); },
        [this](const ParsedToolCall& call) { AddCall(call); });
  } else {
    AddText(clean_text_);
  }
  if (update.finished) {
    summary_ = std::move(update);
    summary_.text.clear();
    summary_.tokens.clear();
    if (options_.stream && !announced_) Announce(summary_.usage);
    Finish();
  }
  return TakeEvents();
}

void AnthropicEncoder::AddThinking(std::string_view text) {
  if (text.empty()) return;
  if (open_ != Block::kThinking) OpenBlock(Block::kThinking);
  AppendToBlock(text);
}

// Text of only whitespace makes no block, tools or not: Anthropic refuses such a block
// when the client sends the message back.
void AnthropicEncoder::AddText(std::string_view text) {
  held_.append(text);
  const size_t last = held_.find_last_not_of(kWhitespace);
  if (last == std::string::npos) return;
  size_t first = 0;
  if (open_ != Block::kText) {
    // After a call (or the reasoning) the whitespace in between is its separator.
    if (blocks_ > 0 || open_ != Block::kNone) first = held_.find_first_not_of(kWhitespace);
    OpenBlock(Block::kText);
  }
  // Trailing whitespace waits: if a call follows, it is that call's separator.
  AppendToBlock(std::string_view(held_).substr(first, last + 1 - first));
  held_.erase(0, last + 1);
}

void AnthropicEncoder::OpenBlock(Block kind) {
  if (open_ != Block::kNone) CloseBlock();
  open_ = kind;
  block_text_.clear();
  if (!options_.stream) return;
  nlohmann::json block =
      kind == Block::kThinking
          ? nlohmann::json{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}
          : nlohmann::json{{"type", "text"}, {"text", ""}};
  Emit("content_block_start", {{"index", blocks_}, {"content_block", std::move(block)}});
}

void AnthropicEncoder::AppendToBlock(std::string_view text) {
  if (!options_.stream) {
    block_text_.append(text);
    return;
  }
  nlohmann::json delta = open_ == Block::kThinking
                             ? nlohmann::json{{"type", "thinking_delta"}, {"thinking", text}}
                             : nlohmann::json{{"type", "text_delta"}, {"text", text}};
  Emit("content_block_delta", {{"index", blocks_}, {"delta", std::move(delta)}});
}

// qvl's reasoning has no signature: it is "" (as clients that keep thinking blocks expect
// the field), which qvl does not check when the block comes back.
void AnthropicEncoder::CloseBlock() {
  const bool thinking = open_ == Block::kThinking;
  open_ = Block::kNone;
  if (options_.stream) {
    if (thinking) {
      Emit("content_block_delta",
           {{"index", blocks_}, {"delta", {{"type", "signature_delta"}, {"signature", ""}}}});
    }
    Emit("content_block_stop", {{"index", blocks_}});
  } else if (thinking) {
    content_.push_back(
        {{"type", "thinking"}, {"thinking", std::move(block_text_)}, {"signature", ""}});
  } else {
    content_.push_back({{"type", "text"}, {"text", std::move(block_text_)}});
  }
  block_text_.clear();
  ++blocks_;
}

void AnthropicEncoder::AddCall(const ParsedToolCall& call) {
  if (open_ != Block::kNone) CloseBlock();
  held_.clear();
  called_ = true;
  const std::string id = NewCompletionId("toolu_");
  nlohmann::json input = ArgumentsObject(call.arguments);
  if (options_.stream) {
    Emit("content_block_start", {{"index", blocks_},
                                 {"content_block",
                                  {{"type", "tool_use"},
                                   {"id", id},
                                   {"name", call.name},
                                   {"input", nlohmann::json::object()}}}});
    // The parser gives whole calls, so the input arrives in one delta.
    Emit("content_block_delta",
         {{"index", blocks_},
          {"delta", {{"type", "input_json_delta"}, {"partial_json", JsonText(input)}}}});
    Emit("content_block_stop", {{"index", blocks_}});
  } else {
    content_.push_back(
        {{"type", "tool_use"}, {"id", id}, {"name", call.name}, {"input", std::move(input)}});
  }
  ++blocks_;
}

void AnthropicEncoder::Finish() {
  finished_ = true;
  if (!CutShortReason(summary_).empty()) {
    // Anthropic's Message has no way to say it is unfinished: the answer is an error.
    const nlohmann::json error = ApiErrorJson(CutShortError(summary_), ErrorShape::kAnthropic);
    if (options_.stream) {
      events_ += SseEvent("error", error);
    } else {
      events_ = JsonText(error);
    }
    return;
  }
  // Trailing whitespace of the answer is its text.
  if (open_ == Block::kText && !held_.empty()) AppendToBlock(held_);
  held_.clear();
  if (open_ != Block::kNone) CloseBlock();
  const char* stop_reason = StopReason(summary_, called_);
  const nlohmann::json stop_sequence =
      summary_.stop.empty() ? nlohmann::json(nullptr) : nlohmann::json(summary_.stop);
  if (!options_.stream) {
    nlohmann::json message = MessageObject(identity_, std::move(content_), stop_reason,
                                           stop_sequence, UsageObject(summary_.usage));
    message["timings"] = TimingsJson(summary_.timings, upload_ms_);
    events_ = JsonText(message);
    return;
  }
  Emit("message_delta",
       {{"delta", {{"stop_reason", stop_reason}, {"stop_sequence", stop_sequence}}},
        {"usage", UsageObject(summary_.usage)},
        {"timings", TimingsJson(summary_.timings, upload_ms_)}});
  Emit("message_stop", nlohmann::json::object());
}

}  // namespace qvl
