#include "server/openai_format.h"

#include <ctime>
#include <random>

#include "engine/request_preparer.h"
#include "server/api_error.h"

namespace qvl {

bool SplitsReasoning(const Engine& engine, const GenerationRequest& request) {
  return OpensReasoning(engine.preparer().chat_template(), request);
}

std::string NewCompletionId(std::string_view prefix) {
  thread_local std::mt19937_64 random(std::random_device{}());
  static const char kHex[] = "0123456789abcdef";
  std::string id(prefix);
  for (int i = 0; i < 24; ++i) id.push_back(kHex[random() & 15]);
  return id;
}

std::string JsonText(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string SseEvent(const nlohmann::json& value) {
  return StrCat("data: ", JsonText(value), "\n\n");
}

std::string SseEvent(std::string_view name, const nlohmann::json& value) {
  return StrCat("event: ", name, "\ndata: ", JsonText(value), "\n\n");
}

std::string FinishReasonText(FinishReason reason) {
  return reason == FinishReason::kStop ? "stop" : "length";
}

std::string CutShortReason(const GenerationUpdate& u) {
  switch (u.finish_reason) {
    case FinishReason::kCancelled:
      return "the server shut down before the answer was complete";
    case FinishReason::kError:
      return StrCat("the answer failed: ", u.error);
    default:
      return "";
  }
}

ApiError CutShortError(const GenerationUpdate& u) {
  const ErrorCode code =
      u.finish_reason == FinishReason::kCancelled ? ErrorCode::kUnavailable : u.error_code;
  return MakeApiError(code, CutShortReason(u));
}

void AddAnswerToSummary(const GenerationUpdate& update, bool first, bool counts_prompt,
                        GenerationUpdate* summary) {
  Usage& usage = summary->usage;
  usage.completion_tokens += update.usage.completion_tokens;
  usage.reasoning_tokens += update.usage.reasoning_tokens;
  if (counts_prompt) {
    usage.prompt_tokens += update.usage.prompt_tokens;
    usage.cached_tokens += update.usage.cached_tokens;
  }
  if (first) summary->timings = update.timings;
  const bool cut_short = !CutShortReason(update).empty();
  if (first || (cut_short && CutShortReason(*summary).empty())) {
    summary->finish_reason = update.finish_reason;
    summary->error = update.error;
    summary->error_code = update.error_code;
  }
  summary->finished = true;
}

void LeaveOutTheAnswer(GenerationUpdate* update) {
  update->text.clear();
  update->tokens.clear();
  update->usage.completion_tokens = 0;
  if (update->finish_reason == FinishReason::kStop) {
    update->finish_reason = FinishReason::kLength;
    update->stop.clear();
    update->stop_token.reset();
  }
}

nlohmann::json CutShortErrorJson(const GenerationUpdate& u) {
  if (CutShortReason(u).empty()) return nullptr;
  return ApiErrorJson(CutShortError(u))["error"];
}

nlohmann::json StopReasonJson(const GenerationUpdate& final_update) {
  if (!final_update.stop.empty()) return final_update.stop;
  if (final_update.stop_token) return *final_update.stop_token;
  return nullptr;
}

nlohmann::json UsageJson(const Usage& usage) {
  nlohmann::json json = {{"prompt_tokens", usage.prompt_tokens},
                         {"completion_tokens", usage.completion_tokens},
                         {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
                         {"prompt_tokens_details", {{"cached_tokens", usage.cached_tokens}}}};
  if (usage.reasoning_tokens > 0) {
    json["completion_tokens_details"] = {{"reasoning_tokens", usage.reasoning_tokens}};
  }
  return json;
}

namespace {

const char* ImageSourceName(ImageSource source) {
  switch (source) {
    case ImageSource::kEncoder:
      return "encoder";
    case ImageSource::kLocalCache:
      return "local_cache";
    case ImageSource::kSharedCache:
      return "shared_cache";
  }
  return "";
}

// What the request's timings add to the cost: whether the encoding was reused, from
// where, and the time it took.
nlohmann::json CostAndTimesJson(const ImageGrid& g) {
  nlohmann::json out = MediaCostJson(g);
  out["cached"] = g.cached;
  out["source"] = ImageSourceName(g.source);
  out["decode_ms"] = g.decode_ms;
  out["encode_ms"] = g.encode_ms;
  return out;
}

}  // namespace

nlohmann::json MediaCostJson(const ImageGrid& g) {
  nlohmann::json out = {{"width", g.width},
                        {"height", g.height},
                        {"resized_width", g.resized_width},
                        {"resized_height", g.resized_height},
                        {"grid_thw", {g.grid_t, g.grid_h, g.grid_w}},
                        {"tokens", g.tokens}};
  if (g.frames > 0) {
    out["frames"] = g.frames;
    out["sampled_frames"] = g.sampled_frames;
    out["text_tokens"] = g.text_tokens;
  }
  return out;
}

nlohmann::json TimingsJson(const Timings& t, double upload_ms) {
  nlohmann::json images = nlohmann::json::array();
  for (const ImageGrid& g : t.images) {
    images.push_back(CostAndTimesJson(g));
  }
  nlohmann::json timings = {{"upload_ms", upload_ms},
                            {"queue_ms", t.queue_ms},
                            {"preprocess_ms", t.preprocess_ms},
                            {"vision_encode_ms", t.vision_ms},
                            {"prefill_ms", t.prefill_ms},
                            {"decode_ms", t.decode_ms},
                            {"ttft_ms", t.ttft_ms},
                            {"total_ms", t.total_ms},
                            {"prefill_tokens_per_s", t.prefill_tokens_per_s},
                            {"decode_tokens_per_s", t.decode_tokens_per_s},
                            {"images", std::move(images)}};
  // llama-server's names for its speculative decoding counts.
  if (t.draft_tokens > 0) {
    timings["draft_n"] = t.draft_tokens;
    timings["draft_n_accepted"] = t.draft_tokens_accepted;
  }
  if (!t.videos.empty()) {
    nlohmann::json& videos = timings["videos"] = nlohmann::json::array();
    for (const ImageGrid& g : t.videos) {
      nlohmann::json video = CostAndTimesJson(g);
      video["frames"] = g.frames;
      video["sampled_frames"] = g.sampled_frames;
      video["text_tokens"] = g.text_tokens;
      video["fps"] = g.fps;
      video["decoded_frames"] = g.decoded_frames;
      video["frames_at_rate"] = g.frames_at_rate;
      video["declared_seconds"] = g.declared_seconds;
      videos.push_back(std::move(video));
    }
  }
  return timings;
}

namespace {

nlohmann::json TokenJson(const TokenLogprob& token) {
  nlohmann::json bytes = nlohmann::json::array();
  for (unsigned char c : token.text) bytes.push_back(static_cast<int>(c));
  return {{"token", token.text}, {"logprob", token.logprob}, {"bytes", std::move(bytes)}};
}

}  // namespace

void AppendLogprobEntries(const std::vector<GeneratedToken>& tokens, nlohmann::json* entries) {
  for (const GeneratedToken& t : tokens) {
    nlohmann::json entry = TokenJson(t.chosen);
    nlohmann::json top = nlohmann::json::array();
    for (const TokenLogprob& alternative : t.top) top.push_back(TokenJson(alternative));
    entry["top_logprobs"] = std::move(top);
    entries->push_back(std::move(entry));
  }
}

nlohmann::json PromptLogprobsJson(const std::vector<GeneratedToken>& prompt, int n) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t k = 0; k < prompt.size(); ++k) {
    if (k == 0) {
      out.push_back(nullptr);  // nothing before it: no probability
      continue;
    }
    const GeneratedToken& t = prompt[k];
    nlohmann::json entry = nlohmann::json::object();
    const auto add = [&entry](const TokenLogprob& token, int32_t rank) {
      entry[std::to_string(token.id)] = {
          {"logprob", token.logprob}, {"rank", rank}, {"decoded_token", token.text}};
    };
    for (size_t i = 0; i < t.top.size() && static_cast<int>(i) < n; ++i) {
      add(t.top[i], static_cast<int32_t>(i + 1));
    }
    add(t.chosen, t.rank);
    out.push_back(std::move(entry));
  }
  return out;
}

nlohmann::json LogprobsJson(const std::vector<GeneratedToken>& tokens) {
  nlohmann::json content = nlohmann::json::array();
  AppendLogprobEntries(tokens, &content);
  return {{"content", std::move(content)}, {"refusal", nullptr}};
}

nlohmann::json ToolCallsJson(const std::vector<ParsedToolCall>& calls, int first_index) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    out.push_back({{"index", first_index + static_cast<int>(i)},
                   {"id", calls[i].id},
                   {"type", "function"},
                   {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments}}}});
  }
  return out;
}

nlohmann::json ChoiceJson(int index, const std::string& text,
                          const std::vector<ParsedToolCall>& calls,
                          const std::vector<GeneratedToken>* logprobs,
                          const std::string& finish_reason, nlohmann::json stop_reason,
                          const std::string* reasoning) {
  nlohmann::json message = {{"role", "assistant"}, {"content", text}, {"refusal", nullptr}};
  if (reasoning != nullptr) message["reasoning_content"] = *reasoning;
  if (!calls.empty()) {
    const size_t end = text.find_last_not_of(" \t\r\n");
    message["content"] = end == std::string::npos ? nlohmann::json(nullptr)
                                                  : nlohmann::json(text.substr(0, end + 1));
    message["tool_calls"] = ToolCallsJson(calls, 0);
  }
  return {{"index", index},
          {"message", std::move(message)},
          {"logprobs", logprobs != nullptr ? LogprobsJson(*logprobs) : nlohmann::json(nullptr)},
          {"finish_reason", finish_reason},
          {"stop_reason", std::move(stop_reason)}};
}

nlohmann::json CompletionJson(const CompletionIdentity& identity, nlohmann::json choices,
                              const GenerationUpdate& summary, double upload_ms) {
  return {{"id", identity.id},
          {"object", "chat.completion"},
          {"created", identity.created},
          {"model", identity.model},
          {"choices", std::move(choices)},
          {"usage", UsageJson(summary.usage)},
          {"timings", TimingsJson(summary.timings, upload_ms)}};
}

nlohmann::json PromptProgressJson(const PromptProgress& progress) {
  return {{"total", progress.total},
          {"cache", progress.cached},
          {"processed", progress.processed},
          {"time_ms", progress.elapsed_ms},
          {"vision", progress.vision}};
}

nlohmann::json ChunkJson(const CompletionIdentity& identity, int index, nlohmann::json delta,
                         nlohmann::json logprobs, nlohmann::json finish_reason,
                         nlohmann::json stop_reason) {
  nlohmann::json choice = {{"index", index},
                           {"delta", std::move(delta)},
                           {"logprobs", std::move(logprobs)},
                           {"finish_reason", finish_reason}};
  if (!finish_reason.is_null()) choice["stop_reason"] = std::move(stop_reason);
  return {{"id", identity.id},
          {"object", "chat.completion.chunk"},
          {"created", identity.created},
          {"model", identity.model},
          {"choices", nlohmann::json::array({std::move(choice)})}};
}

nlohmann::json ModelJson(const std::string& name, int64_t created,
                         const std::optional<ServedModelSizes>& sizes) {
  nlohmann::json model = {{"id", name},
                          {"object", "model"},
                          {"created", created},
                          {"owned_by", "qvl"},
                          {"type", "model"},
                          {"display_name", name},
                          {"created_at", Rfc3339(created)}};
  if (sizes) {
    model["max_model_len"] = sizes->context_tokens;
    model["context_length"] = sizes->context_tokens;
    model["meta"] = {{"n_ctx_train", sizes->trained_context},
                     {"n_vocab", sizes->vocab},
                     {"n_embd", sizes->hidden}};
  }
  return model;
}

nlohmann::json ModelListJson(const std::vector<std::string>& names, int64_t created,
                             const std::optional<ServedModelSizes>& sizes) {
  nlohmann::json data = nlohmann::json::array();
  for (const std::string& name : names) data.push_back(ModelJson(name, created, sizes));
  const nlohmann::json first =
      names.empty() ? nlohmann::json(nullptr) : nlohmann::json(names.front());
  const nlohmann::json last =
      names.empty() ? nlohmann::json(nullptr) : nlohmann::json(names.back());
  return {{"object", "list"},
          {"data", std::move(data)},
          {"has_more", false},
          {"first_id", first},
          {"last_id", last}};
}

std::string Rfc3339(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace qvl
