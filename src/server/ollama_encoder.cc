#include "server/ollama_encoder.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <utility>

#include "server/openai_format.h"
#include "text/utf8.h"

namespace qvl {
namespace {

constexpr char kWhitespace[] = " \t\r\n";

// RFC 3339 in UTC with nanoseconds, as Ollama writes created_at (Go's time.Time).
std::string Rfc3339Now() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - seconds);
  const std::time_t t = static_cast<std::time_t>(seconds.count());
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[96];  // room for any int the format may print, as the compiler checks
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long long>(nanos.count()));
  return text;
}

int64_t Nanoseconds(double ms) { return std::llround(ms * 1e6); }

// Ollama's arguments are an object. The parser gives the JSON text the model wrote; when
// the model wrote them as a string holding JSON, that string is the text. Arguments that
// are no object (a bare string, an array) have no place in Ollama's shape: the call
// keeps its name with empty arguments.
nlohmann::json ToolCallJson(const ParsedToolCall& call) {
  return {{"function", {{"name", call.name}, {"arguments", ArgumentsObject(call.arguments)}}}};
}

}  // namespace

OllamaEncoder::OllamaEncoder(OllamaEncoderOptions options)
    : options_(std::move(options)),
      parse_tool_calls_(options_.parse_tool_calls && options_.api == OllamaApi::kChat) {}

std::string_view OllamaEncoder::ContentType(bool stream) const {
  return stream ? "application/x-ndjson" : "application/json";
}

std::string OllamaEncoder::Start() { return ""; }

std::string OllamaEncoder::LoadReply() const {
  nlohmann::json object = Header();
  SetAnswer("", nlohmann::json::array(), &object);
  object["done"] = true;
  object["done_reason"] = "load";
  return options_.stream ? JsonText(object) + '\n' : JsonText(object);
}

std::string OllamaEncoder::Encode(GenerationUpdate&& update) {
  if (finished_ || update.choice != 0) return "";
  out_.clear();
  if (options_.logprobs) AppendLogprobEntries(update.tokens, &logprobs_);
  clean_text_.clear();
  text::AppendReplacingInvalidUtf8(update.text, &clean_text_);
  if (options_.split_reasoning) {
    split_.reasoning.clear();
    split_.content.clear();
    splitter_.Feed(clean_text_, &split_);
    if (update.finished) splitter_.Finish(&split_);
    AddThinking(split_.reasoning);
    clean_text_.swap(split_.content);
  }
  if (parse_tool_calls_) {
    tools_.FeedInOrder(
        clean_text_, update.finished, &parsed_, [this](std::string_view text) { AddText(text); },
        [this](const ParsedToolCall& call) { AddCall(call); });
  } else {
    // Without tools the answer is the model's text as written, whitespace and all.
    AddContent(clean_text_);
  }
  if (update.finished) {
    summary_ = std::move(update);
    summary_.text.clear();
    summary_.tokens.clear();
    Finish();
  }
  return std::move(out_);
}

void OllamaEncoder::AddThinking(std::string_view text) {
  if (text.empty()) return;
  if (!options_.stream) {
    thinking_.append(text);
    return;
  }
  nlohmann::json line = Header();
  SetAnswer("", nlohmann::json::array(), &line, text);
  line["done"] = false;
  EmitLine(line);
}

void OllamaEncoder::AddText(std::string_view text) {
  held_.append(text);
  const size_t last = held_.find_last_not_of(kWhitespace);
  if (last == std::string::npos) return;
  // Whitespace between a call and the text after it separates that text from the text
  // before the call; with no text before, it is only the call's separator.
  const size_t first = calls_seen_ && !wrote_content_ ? held_.find_first_not_of(kWhitespace) : 0;
  // Trailing whitespace waits: if a call follows, it is that call's separator.
  AddContent(std::string_view(held_).substr(first, last + 1 - first));
  held_.erase(0, last + 1);
}

void OllamaEncoder::AddContent(std::string_view text) {
  if (text.empty()) return;
  wrote_content_ = true;
  content_since_call_ = true;
  if (!options_.stream) {
    content_.append(text);
    return;
  }
  nlohmann::json line = Header();
  SetAnswer(text, nlohmann::json::array(), &line);
  line["done"] = false;
  EmitLine(line);
}

void OllamaEncoder::AddCall(const ParsedToolCall& call) {
  held_.clear();
  calls_seen_ = true;
  content_since_call_ = false;
  if (!options_.stream) {
    tool_calls_.push_back(ToolCallJson(call));
    return;
  }
  nlohmann::json line = Header();
  SetAnswer("", nlohmann::json::array({ToolCallJson(call)}), &line);
  line["done"] = false;
  EmitLine(line);
}

void OllamaEncoder::Finish() {
  finished_ = true;
  // Trailing whitespace of text that no call follows is part of that text.
  if (content_since_call_) AddContent(held_);
  held_.clear();
  const std::string reason = CutShortReason(summary_);
  if (!reason.empty()) {
    const nlohmann::json error = {{"error", reason}};
    if (options_.stream) {
      EmitLine(error);
    } else {
      out_ = JsonText(error);
    }
    return;
  }
  nlohmann::json final_object = Header();
  if (options_.stream) {
    SetAnswer("", nlohmann::json::array(), &final_object);
  } else {
    SetAnswer(content_, std::move(tool_calls_), &final_object, thinking_);
    if (options_.logprobs) final_object["logprobs"] = std::move(logprobs_);
  }
  const Timings& t = summary_.timings;
  final_object["done"] = true;
  final_object["done_reason"] = FinishReasonText(summary_.finish_reason);
  final_object["total_duration"] = Nanoseconds(t.total_ms);
  // Ollama's load_duration is the time spent before the prompt is evaluated (its model
  // load); qvl's model is always loaded, so that time is waiting in the queue,
  // preprocessing (image decoding, tokenization) and the vision tower.
  final_object["load_duration"] = Nanoseconds(t.queue_ms + t.preprocess_ms + t.vision_ms);
  final_object["prompt_eval_count"] = summary_.usage.prompt_tokens;
  final_object["prompt_eval_duration"] = Nanoseconds(t.prefill_ms);
  final_object["eval_count"] = summary_.usage.completion_tokens;
  final_object["eval_duration"] = Nanoseconds(t.decode_ms);
  if (options_.stream) {
    EmitLine(final_object);
  } else {
    out_ = JsonText(final_object);
  }
}

nlohmann::json OllamaEncoder::Header() const {
  return {{"model", options_.model}, {"created_at", Rfc3339Now()}};
}

void OllamaEncoder::SetAnswer(std::string_view content, nlohmann::json tool_calls,
                              nlohmann::json* object, std::string_view thinking) const {
  if (options_.api == OllamaApi::kGenerate) {
    (*object)["response"] = content;
    if (!thinking.empty()) (*object)["thinking"] = thinking;
    return;
  }
  nlohmann::json message = {{"role", "assistant"}, {"content", content}};
  if (!thinking.empty()) message["thinking"] = thinking;
  if (!tool_calls.empty()) message["tool_calls"] = std::move(tool_calls);
  (*object)["message"] = std::move(message);
}

void OllamaEncoder::EmitLine(nlohmann::json object) {
  // An error line is no part of the answer.
  if (!logprobs_.empty() && !object.contains("error")) {
    object["logprobs"] = std::exchange(logprobs_, nlohmann::json::array());
  }
  out_ += JsonText(object);
  out_ += '\n';
}

}  // namespace qvl
