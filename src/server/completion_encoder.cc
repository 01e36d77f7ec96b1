#include "server/completion_encoder.h"

#include <utility>

namespace qvl {

CompletionEncoder::CompletionEncoder(CompletionIdentity identity, const EncoderOptions& options)
    : identity_(std::move(identity)),
      options_(options),
      choices_(static_cast<size_t>(std::max(options.choices, 1))),
      unfinished_(static_cast<int>(choices_.size())) {}

std::string CompletionEncoder::Start() {
  if (!options_.stream) return "";
  std::string out;
  for (size_t i = 0; i < choices_.size(); ++i) {
    nlohmann::json delta = {{"role", "assistant"}, {"content", ""}};
    out += SseEvent(ChunkJson(identity_, static_cast<int>(i), std::move(delta), nullptr, nullptr));
  }
  return out;
}

std::string CompletionEncoder::FinishReasonFor(const Choice& choice) const {
  if (choice.reason == FinishReason::kStop && choice.tools.calls() > 0) return "tool_calls";
  return FinishReasonText(choice.reason);
}

std::string CompletionEncoder::Encode(GenerationUpdate&& update) {
  if (finished_ || update.choice < 0 || update.choice >= static_cast<int>(choices_.size())) {
    return "";
  }
  if (update.progress) {
    if (!options_.stream || !options_.progress) return "";
    nlohmann::json chunk = ChunkJson(identity_, 0, nullptr, nullptr, nullptr);
    chunk["choices"] = nlohmann::json::array();
    chunk["prompt_progress"] = PromptProgressJson(*update.progress);
    return SseEvent(chunk);
  }
  Choice& choice = choices_[update.choice];
  if (choice.finished) return "";
  if (!update.prompt_tokens.empty()) prompt_tokens_ = std::move(update.prompt_tokens);
  if (update.finished) {
    choice.finished = true;
    choice.reason = update.finish_reason;
    choice.error = CutShortErrorJson(update);
    choice.stop_reason = StopReasonJson(update);
    AddAnswerToSummary(update, update.choice == 0, update.choice == 0, &summary_);
    finished_ = --unfinished_ == 0;
  }
  if (!options_.stream) {
    Accumulate(choice, std::move(update));
    return finished_ ? EncodeFinal() : "";
  }
  std::string out = EncodeStreamed(choice, std::move(update));
  if (!finished_) return out;
  if (options_.include_usage) {
    nlohmann::json usage = ChunkJson(identity_, 0, nullptr, nullptr, nullptr);
    usage["choices"] = nlohmann::json::array();
    usage["usage"] = UsageJson(summary_.usage);
    out += SseEvent(usage);
  }
  out += "data: [DONE]\n\n";
  return out;
}

void CompletionEncoder::SplitReasoning(Choice& choice, GenerationUpdate& update,
                                       std::string* reasoning) const {
  if (!options_.split_reasoning) return;
  ReasoningSplitter::Output split;
  choice.splitter.Feed(update.text, &split);
  if (update.finished) choice.splitter.Finish(&split);
  *reasoning = std::move(split.reasoning);
  update.text = std::move(split.content);
}

std::string CompletionEncoder::EncodeStreamed(Choice& choice, GenerationUpdate&& update) {
  const int index = update.choice;
  std::string reasoning;
  SplitReasoning(choice, update, &reasoning);
  std::string out;
  nlohmann::json logprobs =
      options_.logprobs ? LogprobsJson(update.tokens) : nlohmann::json(nullptr);
  bool tokens_unsent = options_.logprobs && !update.tokens.empty();
  if (!reasoning.empty()) {
    // The update's logprobs go with its first chunk.
    nlohmann::json none = options_.logprobs ? LogprobsJson({}) : nlohmann::json(nullptr);
    out += SseEvent(ChunkJson(identity_, index, {{"reasoning_content", std::move(reasoning)}},
                              std::exchange(logprobs, std::move(none)), nullptr));
    tokens_unsent = false;
  }
  ToolCallParser::Output parsed;
  if (options_.parse_tool_calls) {
    choice.tools.Feed(update.text, &parsed);
    if (update.finished) choice.tools.Finish(&parsed);
  } else {
    parsed.content = std::move(update.text);
  }
  if (!parsed.content.empty() || tokens_unsent) {
    out += SseEvent(
        ChunkJson(identity_, index, {{"content", parsed.content}}, std::move(logprobs), nullptr));
  }
  if (!parsed.calls.empty()) {
    const int first = choice.tools.calls() - static_cast<int>(parsed.calls.size());
    out += SseEvent(ChunkJson(
        identity_, index, {{"tool_calls", ToolCallsJson(parsed.calls, first)}}, nullptr, nullptr));
  }
  if (!update.finished) return out;
  nlohmann::json last = ChunkJson(identity_, index, nlohmann::json::object(), nullptr,
                                  FinishReasonFor(choice), choice.stop_reason);
  last["timings"] = TimingsJson(update.timings, upload_ms_);
  if (!choice.error.is_null()) last["error"] = choice.error;
  if (options_.include_usage) last["usage"] = nullptr;
  out += SseEvent(last);
  return out;
}

void CompletionEncoder::Accumulate(Choice& choice, GenerationUpdate&& update) {
  std::string reasoning;
  SplitReasoning(choice, update, &reasoning);
  choice.reasoning += reasoning;
  if (options_.parse_tool_calls) {
    ToolCallParser::Output parsed;
    choice.tools.Feed(update.text, &parsed);
    if (update.finished) choice.tools.Finish(&parsed);
    choice.text += parsed.content;
    for (ParsedToolCall& call : parsed.calls) choice.calls.push_back(std::move(call));
  } else {
    choice.text += update.text;
  }
  if (options_.logprobs) {
    for (GeneratedToken& t : update.tokens) choice.tokens.push_back(std::move(t));
  }
}

std::string CompletionEncoder::EncodeFinal() {
  nlohmann::json choices = nlohmann::json::array();
  for (size_t i = 0; i < choices_.size(); ++i) {
    const Choice& c = choices_[i];
    choices.push_back(ChoiceJson(static_cast<int>(i), c.text, c.calls,
                                 options_.logprobs ? &c.tokens : nullptr, FinishReasonFor(c),
                                 c.stop_reason, options_.split_reasoning ? &c.reasoning : nullptr));
  }
  nlohmann::json body = CompletionJson(identity_, std::move(choices), summary_, upload_ms_);
  if (options_.prompt_logprobs >= 0) {
    body["prompt_logprobs"] = PromptLogprobsJson(prompt_tokens_, options_.prompt_logprobs);
  }
  if (nlohmann::json error = CutShortErrorJson(summary_); !error.is_null()) {
    body["error"] = std::move(error);
  }
  return JsonText(body);
}

}  // namespace qvl
