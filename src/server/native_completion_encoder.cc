#include "server/native_completion_encoder.h"

#include <utility>

namespace qvl {
namespace {

// llama-server's: why the answer ended.
const char* StopType(const GenerationUpdate& final_update) {
  if (final_update.finish_reason != FinishReason::kStop) return "limit";
  return final_update.stop.empty() ? "eos" : "word";
}

// `tokens`' completion_probabilities entries: the OpenAI route's logprob entries (one
// owner of their shape), each token and alternative with its id, as llama-server's.
nlohmann::json Probabilities(const std::vector<GeneratedToken>& tokens) {
  nlohmann::json entries = nlohmann::json::array();
  AppendLogprobEntries(tokens, &entries);
  for (size_t k = 0; k < tokens.size(); ++k) {
    entries[k]["id"] = tokens[k].chosen.id;
    for (size_t j = 0; j < tokens[k].top.size(); ++j) {
      entries[k]["top_logprobs"][j]["id"] = tokens[k].top[j].id;
    }
  }
  return entries;
}

double PerToken(double ms, int64_t n) { return n > 0 ? ms / static_cast<double>(n) : 0; }
double PerSecond(double ms, int64_t n) { return ms > 0 ? 1e3 * static_cast<double>(n) / ms : 0; }

}  // namespace

nlohmann::json LlamaServerTimingsJson(const GenerationUpdate& u, double upload_ms) {
  nlohmann::json timings = TimingsJson(u.timings, upload_ms);
  const int64_t prompt_n = u.usage.prompt_tokens - u.usage.cached_tokens;
  const int64_t predicted_n = u.usage.completion_tokens;
  const double prompt_ms = u.timings.prefill_ms;
  const double predicted_ms = u.timings.decode_ms;
  timings["cache_n"] = u.usage.cached_tokens;
  timings["prompt_n"] = prompt_n;
  timings["prompt_ms"] = prompt_ms;
  timings["prompt_per_token_ms"] = PerToken(prompt_ms, prompt_n);
  timings["prompt_per_second"] = PerSecond(prompt_ms, prompt_n);
  timings["predicted_n"] = predicted_n;
  timings["predicted_ms"] = predicted_ms;
  timings["predicted_per_token_ms"] = PerToken(predicted_ms, predicted_n);
  timings["predicted_per_second"] = PerSecond(predicted_ms, predicted_n);
  return timings;
}

NativeCompletionEncoder::NativeCompletionEncoder(NativeEncoderOptions options)
    : options_(std::move(options)),
      results_(options_.prompts.size()),
      finals_(options_.prompts.size()),
      unfinished_(static_cast<int>(options_.prompts.size())) {}

nlohmann::json NativeCompletionEncoder::Object(int index, const std::string& content,
                                               nlohmann::json tokens, bool stop) const {
  return {{"index", index},
          {"content", content},
          {"tokens", std::move(tokens)},
          {"stop", stop},
          {"id_slot", 0}};
}

nlohmann::json NativeCompletionEncoder::FinalObject(int index, const Result& result,
                                                    const GenerationUpdate& update) const {
  // Streamed, the content and tokens went out in the events before.
  const bool stream = options_.stream;
  nlohmann::json out = Object(index, stream ? "" : result.content,
                              stream ? nlohmann::json::array() : result.tokens, true);
  out["model"] = options_.model;
  out["generation_settings"] = options_.generation_settings;
  out["tokens_predicted"] = update.usage.completion_tokens;
  out["tokens_evaluated"] = update.usage.prompt_tokens;
  out["prompt"] = options_.prompts[static_cast<size_t>(index)];
  out["has_new_line"] = result.has_new_line;
  // A prompt and answer that do not fit the context are refused before any work.
  out["truncated"] = false;
  out["stop_type"] = StopType(update);
  out["stopping_word"] = update.stop;
  out["tokens_cached"] = update.usage.cached_tokens;
  out["timings"] = LlamaServerTimingsJson(update, upload_ms_);
  if (!stream && options_.n_probs > 0) out["completion_probabilities"] = result.probabilities;
  if (nlohmann::json error = CutShortErrorJson(update); !error.is_null()) {
    out["error"] = std::move(error);
  }
  return out;
}

std::string NativeCompletionEncoder::Encode(GenerationUpdate&& update) {
  const int index = update.choice;
  if (finished() || index < 0 || index >= static_cast<int>(results_.size())) return "";
  if (update.progress) {
    if (!options_.stream || !options_.progress) return "";
    nlohmann::json event = Object(index, "", nlohmann::json::array(), false);
    event["prompt_progress"] = PromptProgressJson(*update.progress);
    return SseEvent(event);
  }
  Result& result = results_[static_cast<size_t>(index)];
  if (result.finished) return "";
  if (options_.prompt_only) LeaveOutTheAnswer(&update);
  nlohmann::json ids = nlohmann::json::array();
  if (options_.return_tokens || options_.stream) {
    for (const GeneratedToken& t : update.tokens) ids.push_back(t.chosen.id);
  }
  nlohmann::json probabilities =
      options_.n_probs > 0 ? Probabilities(update.tokens) : nlohmann::json::array();
  result.has_new_line |= update.text.find('\n') != std::string::npos;
  std::string out;
  if (!options_.stream) {
    result.content += update.text;
    for (nlohmann::json& id : ids) result.tokens.push_back(std::move(id));
    for (nlohmann::json& p : probabilities) result.probabilities.push_back(std::move(p));
  } else if (!update.text.empty() || !update.tokens.empty()) {
    nlohmann::json event = Object(index, update.text, std::move(ids), false);
    if (options_.n_probs > 0) event["completion_probabilities"] = std::move(probabilities);
    out = SseEvent(event);
  }
  if (!update.finished) return out;
  result.finished = true;
  --unfinished_;
  AddAnswerToSummary(update, index == 0, true, &summary_);
  nlohmann::json final_object = FinalObject(index, result, update);
  if (options_.stream) return out + SseEvent(final_object);
  finals_[static_cast<size_t>(index)] = std::move(final_object);
  if (!finished()) return "";
  // One prompt's result is an object, several prompts' an array, as llama-server answers.
  if (finals_.size() == 1) return JsonText(finals_.front());
  return JsonText(nlohmann::json(std::move(finals_)));
}

}  // namespace qvl
