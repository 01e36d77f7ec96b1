#include "server/openai_format.h"

#include <random>

namespace qvl {

std::string NewCompletionId() {
  thread_local std::mt19937_64 random(std::random_device{}());
  static const char kHex[] = "0123456789abcdef";
  std::string id = "chatcmpl-";
  for (int i = 0; i < 24; ++i) id.push_back(kHex[random() & 15]);
  return id;
}

std::string JsonText(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string SseEvent(const nlohmann::json& value) {
  return StrCat("data: ", JsonText(value), "\n\n");
}

std::string FinishReasonText(FinishReason reason) { return FinishReasonName(reason); }

nlohmann::json UsageJson(const Usage& usage) {
  return {{"prompt_tokens", usage.prompt_tokens},
          {"completion_tokens", usage.completion_tokens},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", usage.cached_tokens}}}};
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

}  // namespace

nlohmann::json TimingsJson(const Timings& t) {
  nlohmann::json images = nlohmann::json::array();
  for (const ImageGrid& g : t.images) {
    images.push_back({{"width", g.width},
                      {"height", g.height},
                      {"resized_width", g.resized_width},
                      {"resized_height", g.resized_height},
                      {"grid_thw", {g.grid_t, g.grid_h, g.grid_w}},
                      {"tokens", g.tokens},
                      {"cached", g.cached},
                      {"source", ImageSourceName(g.source)}});
  }
  return {{"queue_ms", t.queue_ms},
          {"preprocess_ms", t.preprocess_ms},
          {"vision_encode_ms", t.vision_ms},
          {"prefill_ms", t.prefill_ms},
          {"decode_ms", t.decode_ms},
          {"ttft_ms", t.ttft_ms},
          {"total_ms", t.total_ms},
          {"prefill_tokens_per_s", t.prefill_tokens_per_s},
          {"decode_tokens_per_s", t.decode_tokens_per_s},
          {"images", std::move(images)}};
}

namespace {

nlohmann::json TokenJson(const TokenLogprob& token) {
  nlohmann::json bytes = nlohmann::json::array();
  for (unsigned char c : token.text) bytes.push_back(static_cast<int>(c));
  return {{"token", token.text}, {"logprob", token.logprob}, {"bytes", std::move(bytes)}};
}

}  // namespace

nlohmann::json LogprobsJson(const std::vector<GeneratedToken>& tokens) {
  nlohmann::json content = nlohmann::json::array();
  for (const GeneratedToken& t : tokens) {
    nlohmann::json entry = TokenJson(t.chosen);
    nlohmann::json top = nlohmann::json::array();
    for (const TokenLogprob& alternative : t.top) top.push_back(TokenJson(alternative));
    entry["top_logprobs"] = std::move(top);
    content.push_back(std::move(entry));
  }
  return {{"content", std::move(content)}, {"refusal", nullptr}};
}

nlohmann::json CompletionJson(const CompletionIdentity& identity, const std::string& text,
                              const std::vector<GeneratedToken>* logprobs,
                              const GenerationUpdate& final_update) {
  nlohmann::json choice = {
      {"index", 0},
      {"message", {{"role", "assistant"}, {"content", text}, {"refusal", nullptr}}},
      {"logprobs", logprobs != nullptr ? LogprobsJson(*logprobs) : nlohmann::json(nullptr)},
      {"finish_reason", FinishReasonText(final_update.finish_reason)}};
  return {{"id", identity.id},
          {"object", "chat.completion"},
          {"created", identity.created},
          {"model", identity.model},
          {"choices", nlohmann::json::array({std::move(choice)})},
          {"usage", UsageJson(final_update.usage)},
          {"timings", TimingsJson(final_update.timings)}};
}

nlohmann::json ChunkJson(const CompletionIdentity& identity, nlohmann::json delta,
                         nlohmann::json logprobs, nlohmann::json finish_reason) {
  nlohmann::json choice = {{"index", 0},
                           {"delta", std::move(delta)},
                           {"logprobs", std::move(logprobs)},
                           {"finish_reason", std::move(finish_reason)}};
  return {{"id", identity.id},
          {"object", "chat.completion.chunk"},
          {"created", identity.created},
          {"model", identity.model},
          {"choices", nlohmann::json::array({std::move(choice)})}};
}

nlohmann::json ModelListJson(const std::vector<std::string>& names, int64_t created) {
  nlohmann::json data = nlohmann::json::array();
  for (const std::string& name : names) {
    data.push_back({{"id", name}, {"object", "model"}, {"created", created}, {"owned_by", "qvl"}});
  }
  return {{"object", "list"}, {"data", std::move(data)}};
}

}  // namespace qvl
