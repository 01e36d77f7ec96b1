#include "server/text_completion_encoder.h"

#include <utility>

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
                                             TextEncoderOptions options)
    : identity_(std::move(identity)),
      options_(std::move(options)),
      choices_(static_cast<size_t>(options_.prompts * options_.n)),
      prompts_(static_cast<size_t>(options_.prompts)),
      unfinished_(options_.prompts * options_.n) {
  if (WithLogprobs()) {
    for (Choice& c : choices_) c.logprobs = EmptyLogprobs();
  }
}

nlohmann::json TextCompletionEncoder::Object(nlohmann::json choices) const {
  return {{"id", identity_.id},
          {"object", "text_completion"},
          {"created", identity_.created},
          {"model", identity_.model},
          {"choices", std::move(choices)}};
}

nlohmann::json TextCompletionEncoder::ChoiceJson(int index, const std::string& text,
                                                 nlohmann::json logprobs,
                                                 nlohmann::json finish_reason,
                                                 nlohmann::json stop_reason) const {
  return {{"text", text},
          {"index", index},
          {"logprobs", std::move(logprobs)},
          {"finish_reason", std::move(finish_reason)},
          {"stop_reason", std::move(stop_reason)}};
}

void TextCompletionEncoder::AddLogprobs(const std::vector<GeneratedToken>& tokens, bool prompt,
                                        Choice& choice, nlohmann::json* out) const {
  for (size_t k = 0; k < tokens.size(); ++k) {
    const GeneratedToken& t = tokens[k];
    (*out)["tokens"].push_back(t.chosen.text);
    if (prompt && k == 0) {
      // Nothing comes before it: it has no probability.
      (*out)["token_logprobs"].push_back(nullptr);
      (*out)["top_logprobs"].push_back(nullptr);
    } else {
      (*out)["token_logprobs"].push_back(t.chosen.logprob);
      // As OpenAI: the N most likely tokens, plus the chosen one when it is not among them.
      nlohmann::json top = nlohmann::json::object();
      for (size_t i = 0; i < t.top.size() && static_cast<int>(i) < options_.logprobs; ++i) {
        top[t.top[i].text] = t.top[i].logprob;
      }
      if (!top.contains(t.chosen.text)) top[t.chosen.text] = t.chosen.logprob;
      (*out)["top_logprobs"].push_back(std::move(top));
    }
    (*out)["text_offset"].push_back(choice.text_offset);
    choice.text_offset += static_cast<int64_t>(t.chosen.text.size());
  }
}

void TextCompletionEncoder::Take(int index, Choice& choice, const GenerationUpdate& update,
                                 std::string* text, nlohmann::json* logprobs) {
  if (Echo() && !choice.echoed) {
    choice.echoed = true;
    const int prompt = index / options_.n;
    const std::string& echoed = options_.echo[static_cast<size_t>(prompt)];
    *text += echoed;
    if (WithLogprobs()) {
      AddLogprobs(prompts_[static_cast<size_t>(prompt)].tokens, true, choice, logprobs);
    }
    choice.text_offset = static_cast<int64_t>(echoed.size());
  }
  *text += update.text;
  if (WithLogprobs()) AddLogprobs(update.tokens, false, choice, logprobs);
}

std::string TextCompletionEncoder::Add(int index, GenerationUpdate&& update) {
  Choice& choice = choices_[static_cast<size_t>(index)];
  if (options_.prompt_only) LeaveOutTheAnswer(&update);
  if (update.finished) {
    choice.finished = true;
    choice.reason = update.finish_reason;
    choice.stop_reason = StopReasonJson(update);
    choice.error = CutShortErrorJson(update);
    // A prompt's answers share it: it counts once.
    AddAnswerToSummary(update, index == 0, index % options_.n == 0, &summary_);
    --unfinished_;
  }
  if (!options_.stream) {
    Take(index, choice, update, &choice.text, &choice.logprobs);
    return "";
  }
  std::string out;
  std::string text;
  nlohmann::json logprobs = WithLogprobs() ? EmptyLogprobs() : nlohmann::json(nullptr);
  Take(index, choice, update, &text, &logprobs);
  if (!text.empty() || (WithLogprobs() && !logprobs["tokens"].empty())) {
    out += SseEvent(Object(
        nlohmann::json::array({ChoiceJson(index, text, std::move(logprobs), nullptr, nullptr)})));
  }
  if (!update.finished) return out;
  nlohmann::json last = Object(nlohmann::json::array(
      {ChoiceJson(index, "", nullptr, FinishReasonText(choice.reason), choice.stop_reason)}));
  last["timings"] = TimingsJson(update.timings, upload_ms_);
  if (!choice.error.is_null()) last["error"] = choice.error;
  if (options_.include_usage) last["usage"] = nullptr;
  out += SseEvent(last);
  return out;
}

std::string TextCompletionEncoder::Final() const {
  nlohmann::json choices = nlohmann::json::array();
  for (size_t i = 0; i < choices_.size(); ++i) {
    const Choice& c = choices_[i];
    choices.push_back(ChoiceJson(static_cast<int>(i), c.text,
                                 WithLogprobs() ? c.logprobs : nlohmann::json(nullptr),
                                 FinishReasonText(c.reason), c.stop_reason));
    if (options_.prompt_logprobs >= 0) {
      choices.back()["prompt_logprobs"] = PromptLogprobsJson(
          prompts_[i / static_cast<size_t>(options_.n)].tokens, options_.prompt_logprobs);
    }
  }
  nlohmann::json body = Object(std::move(choices));
  body["usage"] = UsageJson(summary_.usage);
  body["timings"] = TimingsJson(summary_.timings, upload_ms_);
  if (nlohmann::json error = CutShortErrorJson(summary_); !error.is_null()) {
    body["error"] = std::move(error);
  }
  return JsonText(body);
}

std::string TextCompletionEncoder::Encode(GenerationUpdate&& update) {
  const int index = update.choice;
  if (finished() || index < 0 || index >= static_cast<int>(choices_.size())) return "";
  if (update.progress) {
    if (!options_.stream || !options_.progress) return "";
    nlohmann::json chunk = Object(nlohmann::json::array());
    chunk["prompt_progress"] = PromptProgressJson(*update.progress);
    return SseEvent(chunk);
  }
  if (choices_[static_cast<size_t>(index)].finished) return "";
  std::string out;
  const int first = index - index % options_.n;  // the prompt's answer 0
  Prompt& prompt = prompts_[static_cast<size_t>(index / options_.n)];
  if (!NeedsPromptTokens() || prompt.tokens_known) {
    out = Add(index, std::move(update));
  } else if (index != first) {
    choices_[static_cast<size_t>(index)].held.push_back(std::move(update));
  } else {
    prompt.tokens = std::move(update.prompt_tokens);
    prompt.tokens_known = true;
    out = Add(index, std::move(update));
    for (int j = first + 1; j < first + options_.n; ++j) {
      for (GenerationUpdate& held : std::exchange(choices_[static_cast<size_t>(j)].held, {})) {
        out += Add(j, std::move(held));
      }
    }
  }
  if (!finished()) return out;
  if (!options_.stream) return Final();
  if (options_.include_usage) {
    nlohmann::json usage = Object(nlohmann::json::array());
    usage["usage"] = UsageJson(summary_.usage);
    out += SseEvent(usage);
  }
  out += "data: [DONE]\n\n";
  return out;
}

}  // namespace qvl
