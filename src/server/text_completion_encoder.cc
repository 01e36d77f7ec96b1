#include "server/text_completion_encoder.h"

namespace qvl {
namespace {

nlohmann::json EmptyLogprobs() {
  return {{"tokens", nlohmann::json::array()},
          {"token_logprobs", nlohmann::json::array()},
          {"top_logprobs", nlohmann::json::array()},
          {"text_offset", nlohmann::json::array()}};
}

}  // namespace

TextCompletionEncoder::TextCompletionEncoder(CompletionIdentity identity,
                                             const TextEncoderOptions& options)
    : identity_(std::move(identity)), options_(options) {
  if (options_.logprobs >= 0) logprobs_ = EmptyLogprobs();
}

nlohmann::json TextCompletionEncoder::Object(nlohmann::json choices) const {
  return {{"id", identity_.id},
          {"object", "text_completion"},
          {"created", identity_.created},
          {"model", identity_.model},
          {"choices", std::move(choices)}};
}

nlohmann::json TextCompletionEncoder::Choice(const std::string& text, nlohmann::json logprobs,
                                             nlohmann::json finish_reason,
                                             nlohmann::json stop_reason) const {
  return {{"text", text},
          {"index", 0},
          {"logprobs", std::move(logprobs)},
          {"finish_reason", std::move(finish_reason)},
          {"stop_reason", std::move(stop_reason)}};
}

void TextCompletionEncoder::AddLogprobs(const GenerationUpdate& update, nlohmann::json* out) {
  for (const GeneratedToken& t : update.tokens) {
    (*out)["tokens"].push_back(t.chosen.text);
    (*out)["token_logprobs"].push_back(t.chosen.logprob);
    // As OpenAI: the N most likely tokens, plus the chosen one when it is not among them.
    nlohmann::json top = nlohmann::json::object();
    for (size_t i = 0; i < t.top.size() && static_cast<int>(i) < options_.logprobs; ++i) {
      top[t.top[i].text] = t.top[i].logprob;
    }
    if (!top.contains(t.chosen.text)) top[t.chosen.text] = t.chosen.logprob;
    (*out)["top_logprobs"].push_back(std::move(top));
    (*out)["text_offset"].push_back(text_offset_);
    text_offset_ += static_cast<int64_t>(t.chosen.text.size());
  }
}

std::string TextCompletionEncoder::Encode(GenerationUpdate&& update) {
  if (finished_) return "";
  if (update.progress) {
    if (!options_.stream || !options_.progress) return "";
    nlohmann::json chunk = Object(nlohmann::json::array());
    chunk["prompt_progress"] = PromptProgressJson(*update.progress);
    return SseEvent(chunk);
  }
  if (update.finished) {
    finished_ = true;
    summary_.finished = true;
    summary_.finish_reason = update.finish_reason;
    summary_.error_code = update.error_code;
    summary_.error = update.error;
    summary_.usage = update.usage;
    summary_.timings = update.timings;
  }
  const bool with_logprobs = options_.logprobs >= 0;
  if (!options_.stream) {
    text_ += update.text;
    if (with_logprobs) AddLogprobs(update, &logprobs_);
    if (!update.finished) return "";
    nlohmann::json body = Object(nlohmann::json::array(
        {Choice(text_, with_logprobs ? std::move(logprobs_) : nlohmann::json(nullptr),
                FinishReasonText(update.finish_reason), StopReasonJson(update))}));
    body["usage"] = UsageJson(update.usage);
    body["timings"] = TimingsJson(update.timings, upload_ms_);
    if (nlohmann::json error = CutShortErrorJson(update); !error.is_null()) {
      body["error"] = std::move(error);
    }
    return JsonText(body);
  }
  std::string out;
  if (!update.text.empty() || (with_logprobs && !update.tokens.empty())) {
    nlohmann::json logprobs(nullptr);
    if (with_logprobs) {
      logprobs = EmptyLogprobs();
      AddLogprobs(update, &logprobs);
    }
    out += SseEvent(Object(
        nlohmann::json::array({Choice(update.text, std::move(logprobs), nullptr, nullptr)})));
  }
  if (!update.finished) return out;
  nlohmann::json last = Object(nlohmann::json::array(
      {Choice("", nullptr, FinishReasonText(update.finish_reason), StopReasonJson(update))}));
  last["timings"] = TimingsJson(update.timings, upload_ms_);
  if (nlohmann::json error = CutShortErrorJson(update); !error.is_null()) {
    last["error"] = std::move(error);
  }
  if (options_.include_usage) last["usage"] = nullptr;
  out += SseEvent(last);
  if (options_.include_usage) {
    nlohmann::json usage = Object(nlohmann::json::array());
    usage["usage"] = UsageJson(update.usage);
    out += SseEvent(usage);
  }
  out += "data: [DONE]\n\n";
  return out;
}

}  // namespace qvl
