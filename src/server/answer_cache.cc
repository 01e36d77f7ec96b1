#include "server/answer_cache.h"

#include <openssl/evp.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "base/timer.h"
#include "engine/request_preparer.h"
#include "engine/sampler.h"
#include "model/qwen3vl.h"
#include "share/value_envelope.h"

namespace qvl {
namespace {

constexpr std::string_view kMagic = "QVLA";
// The answer format; a change to the payload or to what an answer means bumps it.
constexpr uint32_t kAnswerFormatVersion = 2;

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &n, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

bool Deterministic(const GenerationRequest& request, const Engine& engine) {
  if (request.sampling.seed.has_value()) return true;
  try {
    return ResolveSampling(request.sampling, engine.model().folder().generation, 0).greedy;
  } catch (const std::exception&) {
    return false;  // Submit reports the bad parameter
  }
}

nlohmann::json TokenJson(const TokenLogprob& t) {
  return {{"id", t.id}, {"text", t.text}, {"logprob", t.logprob}};
}

TokenLogprob TokenFrom(const nlohmann::json& j) {
  return {j.at("id").get<int32_t>(), j.at("text").get<std::string>(), j.at("logprob").get<float>()};
}

// Collects one answer from its updates.
struct Recording {
  std::string text;
  nlohmann::json tokens = nlohmann::json::array();
  bool failed = false;
};

std::string AnswerPayload(const Recording& r, const GenerationUpdate& final_update) {
  nlohmann::json j;
  j["text"] = r.text;
  j["tokens"] = r.tokens;
  j["finish_reason"] = FinishReasonName(final_update.finish_reason);
  // What ended it, which Anthropic's stop_sequence and vLLM's stop_reason repeat.
  j["stop"] = final_update.stop;
  j["stop_token"] =
      final_update.stop_token ? nlohmann::json(*final_update.stop_token) : nlohmann::json(nullptr);
  j["prompt_tokens"] = final_update.usage.prompt_tokens;
  j["completion_tokens"] = final_update.usage.completion_tokens;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void Append(const GenerationUpdate& u, Recording* r) {
  r->text += u.text;
  for (const GeneratedToken& t : u.tokens) {
    nlohmann::json top = nlohmann::json::array();
    for (const TokenLogprob& alt : t.top) top.push_back(TokenJson(alt));
    r->tokens.push_back({{"chosen", TokenJson(t.chosen)}, {"top", std::move(top)}});
  }
}

}  // namespace

std::optional<std::string> AnswerKey(const SharedCache& cache, std::string_view body,
                                     const GenerationRequest& request, const Engine& engine,
                                     std::string_view route) {
  if (request.prompt_logprobs >= 0 || !Deterministic(request, engine)) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  if (j.contains("n") && !(j["n"].is_number_integer() && j["n"].get<int64_t>() == 1))
    return std::nullopt;
  for (const char* field : {"stream", "stream_options", "return_progress", "user"}) j.erase(field);
  const EngineOptions& o = engine.options();
  std::string canonical = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  canonical += StrCat("\n", o.default_max_tokens, " ", o.default_reasoning_budget, " ",
                      o.context_tokens, " ", o.min_pixels, " ", o.max_pixels);
  canonical +=
      StrCat(" ", o.min_image_tokens, " ", o.max_image_tokens, " ", o.high_detail_image_tokens);
  canonical += StrCat(" ", o.min_video_tokens, " ", o.max_video_tokens, " ", o.video_token_limit);
  // The model folder's defaults that the model key (ModelIdentity: config.json,
  // preprocessor_config.json, tokenizer, chat template, the weights) leaves out:
  // generation_config.json's sampling, which a seeded request that sets none samples with, and a
  // video's frame sampling and size from video_preprocessor_config.json.
  const SamplerConfig s = ResolveSampling({}, engine.model().folder().generation, 0);
  canonical += StrCat("\n", s.greedy, " ", s.temperature, " ", s.top_k, " ", s.top_p, " ", s.min_p,
                      " ", s.repetition_penalty);
  const VideoProcessorParams& video = engine.preparer().video_params();
  canonical +=
      StrCat(" ", video.sampling.fps, " ", video.sampling.min_frames, " ",
             video.sampling.max_frames, " ", video.image.min_pixels, " ", video.image.max_pixels);
  // A raw prompt (/v1/completions, Ollama's raw generate) is tokenized as is, without the
  // chat template: a body that also holds chat fields is another answer on a chat route.
  if (request.prompt_text || !request.prompt_tokens.empty()) canonical.append("\nraw prompt");
  if (!route.empty()) canonical.append(StrCat("\nroute ", route));
  for (const ImageInput& image : request.images) {
    canonical.push_back('\n');
    canonical.append(
        Sha256Hex({reinterpret_cast<const char*>(image.bytes.data()), image.bytes.size()}));
  }
  // A video URL or file path says nothing of what it holds today.
  for (const VideoInput& video : request.videos) {
    canonical.append("\nvideo ");
    canonical.append(
        Sha256Hex({reinterpret_cast<const char*>(video.file.data()), video.file.size()}));
    for (const std::vector<uint8_t>& frame : video.frames) {
      canonical.push_back(' ');
      canonical.append(Sha256Hex({reinterpret_cast<const char*>(frame.data()), frame.size()}));
    }
  }
  return cache.Key("ans", Sha256Hex(canonical));
}

bool ReplayAnswer(SharedCache& cache, const std::string& key, UpdateChannel& channel) {
  const Stopwatch clock;
  SharedCacheCounters& counters = cache.counters();
  const std::optional<std::string> value = cache.client().Get(key);
  if (!value) {
    ++counters.answer_misses;
    return false;
  }
  const std::optional<std::string_view> payload =
      OpenValue(kMagic, kAnswerFormatVersion, key, *value);
  const nlohmann::json j =
      payload ? nlohmann::json::parse(*payload, nullptr, false) : nlohmann::json();
  GenerationUpdate text, last;
  try {
    if (!j.is_object()) throw std::runtime_error("not an answer");
    text.text = j.at("text").get<std::string>();
    for (const nlohmann::json& t : j.at("tokens")) {
      GeneratedToken g;
      g.chosen = TokenFrom(t.at("chosen"));
      for (const nlohmann::json& alt : t.at("top")) g.top.push_back(TokenFrom(alt));
      text.tokens.push_back(std::move(g));
    }
    const std::string reason = j.at("finish_reason").get<std::string>();
    last.finish_reason = reason == "stop"     ? FinishReason::kStop
                         : reason == "length" ? FinishReason::kLength
                                              : throw std::runtime_error("finish reason");
    last.stop = j.at("stop").get<std::string>();
    if (const nlohmann::json& token = j.at("stop_token"); !token.is_null()) {
      last.stop_token = token.get<int32_t>();
    }
    last.usage.prompt_tokens = j.at("prompt_tokens").get<int64_t>();
    last.usage.completion_tokens = j.at("completion_tokens").get<int64_t>();
  } catch (const std::exception&) {
    ++counters.answer_rejected;
    return false;
  }
  ++counters.answer_hits;
  last.finished = true;
  last.usage.cached_tokens = last.usage.prompt_tokens;  // none were computed here
  last.timings.ttft_ms = last.timings.total_ms = clock.Millis();
  channel.Push(std::move(text));
  channel.Push(std::move(last));
  return true;
}

UpdateSink RecordAnswer(SharedCache* cache, const std::optional<std::string>& key,
                        UpdateSink sink) {
  if (cache == nullptr || !key) return sink;
  auto recording = std::make_shared<Recording>();
  return [cache, key = *key, recording, sink = std::move(sink)](GenerationUpdate&& update) {
    if (!update.finished) {
      Append(update, recording.get());
    } else if (update.finish_reason == FinishReason::kStop ||
               update.finish_reason == FinishReason::kLength) {
      Append(update, recording.get());
      std::string payload = AnswerPayload(*recording, update);
      const size_t bytes = payload.size();
      SharedCacheCounters* counters = &cache->counters();
      cache->writer().Post(
          key, bytes,
          [key, payload = std::move(payload)] {
            return SealValue(kMagic, kAnswerFormatVersion, key, payload);
          },
          [counters](bool written) {
            ++(written ? counters->answer_stores : counters->answer_dropped);
          });
    }
    sink(std::move(update));
  };
}

}  // namespace qvl
