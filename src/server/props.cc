#include "server/props.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "base/build_info.h"
#include "engine/request_preparer.h"
#include "engine/request_ranges.h"
#include "engine/sampler.h"
#include "image/smart_resize.h"
#include "model/qwen3vl.h"
#include "server/server_dialects.h"
#include "text/chat_template.h"

namespace qvl {
namespace {

// A float parameter as it was written (0.7, not 0.699999988 of the float widened).
double Decimal(float value) { return std::round(static_cast<double>(value) * 1e6) / 1e6; }

nlohmann::json ImageLimitsJson(const Engine& engine) {
  const EngineOptions& o = engine.options();
  const RequestPreparer& p = engine.preparer();
  const ServerImageBudget& b = p.image_budget();
  const int64_t per_token = p.pixels_per_image_token();
  const int64_t min_pixels = b.min_pixels > 0 ? b.min_pixels : p.image_params().min_pixels;
  return {{"max_per_request", o.max_images_per_request},
          {"max_bytes", o.max_image_bytes},
          {"max_decoded_pixels", o.max_image_pixels},
          {"pixels_per_token", per_token},
          {"min_side", p.image_params().factor()},
          {"max_aspect_ratio", kMaxAspectRatio},
          {"min_tokens", min_pixels / per_token},
          {"default_max_tokens", b.max_pixels / per_token},
          {"low_detail_tokens", b.low_pixels / per_token},
          {"max_tokens", b.high_pixels / per_token}};
}

nlohmann::json VideoLimitsJson(const Engine& engine) {
  const VideoLimits& l = engine.options().video_limits;
  const RequestPreparer& p = engine.preparer();
  const ServerVideoBudget& b = p.video_budget();
  const int64_t per_token = p.pixels_per_video_token();
  const int64_t min_tokens =
      b.min_tokens > 0 ? b.min_tokens : p.video_params().image.min_pixels / per_token;
  const FrameSampling& sampling = p.video_params().sampling;
  return {{"max_per_request", l.max_videos_per_request},
          {"max_bytes", l.max_encoded_bytes},
          {"max_frame_pixels", l.max_frame_pixels},
          {"max_frames", l.max_input_frames},
          {"max_seconds", l.max_seconds},
          {"pixels_per_token", per_token},
          {"min_tokens", min_tokens},
          {"default_max_tokens", b.max_tokens},
          {"max_tokens", b.limit_tokens},
          {"sampling",
           {{"fps", sampling.fps},
            {"min_frames", sampling.min_frames},
            {"max_frames", sampling.max_frames}}}};
}

}  // namespace

nlohmann::json GenerationSettingsJson(const GenerationRequest& request, const Engine& engine) {
  const SamplerConfig s = ResolveSampling(request.sampling, engine.model().folder().generation, 0);
  const int max_tokens =
      request.max_tokens > 0 ? request.max_tokens : engine.options().default_max_tokens;
  nlohmann::json chain = nlohmann::json::array({SamplerStepName(SamplerStep::kPenalties)});
  for (SamplerStep step : s.chain) chain.push_back(SamplerStepName(step));
  nlohmann::json bias = nlohmann::json::array();
  for (const LogitBias& b : request.logit_bias) bias.push_back({b.token, Decimal(b.bias)});
  const std::optional<uint64_t>& seed = request.sampling.seed;
  return {{"temperature", s.greedy ? 0.0 : Decimal(s.temperature)},
          {"top_p", Decimal(s.top_p)},
          {"top_k", s.top_k},
          {"min_p", Decimal(s.min_p)},
          {"repeat_penalty", Decimal(s.repetition_penalty)},
          {"presence_penalty", Decimal(s.presence_penalty)},
          {"frequency_penalty", Decimal(s.frequency_penalty)},
          {"typical_p", Decimal(s.typical_p)},
          {"top_n_sigma", Decimal(s.top_n_sigma)},
          {"xtc_probability", Decimal(s.xtc_probability)},
          {"xtc_threshold", Decimal(s.xtc_threshold)},
          {"dynatemp_range", Decimal(s.dynatemp_range)},
          {"dynatemp_exponent", Decimal(s.dynatemp_exponent)},
          {"mirostat", s.mirostat},
          {"mirostat_tau", Decimal(s.mirostat_tau)},
          {"mirostat_eta", Decimal(s.mirostat_eta)},
          {"samplers", chain},
          {"seed", seed ? nlohmann::json(*seed) : nlohmann::json()},
          {"n_predict", max_tokens},
          {"max_tokens", max_tokens},
          {"stop", request.stop},
          {"ignore_eos", request.ignore_eos},
          {"logit_bias", std::move(bias)},
          {"n_probs", std::max(request.top_logprobs, 0)},
          {"speculative.n_max", engine.options().draft_tokens}};
}

nlohmann::json PropsJson(const ApiServerOptions& options, const Engine& engine) {
  const EngineOptions& o = engine.options();
  // The served id, as /v1/models names it: never the folder's path on this machine.
  const std::string& id = options.model_names.front();
  nlohmann::json limits = {
      {"max_body_bytes", options.max_body_bytes},
      {"context_tokens", o.context_tokens},
      {"default_max_tokens", o.default_max_tokens},
      {"default_thinking_token_budget", o.default_reasoning_budget < 0
                                            ? nlohmann::json()
                                            : nlohmann::json(o.default_reasoning_budget)},
      {"max_stop_strings", options.request.max_stop_strings},
      {"max_stop_token_ids", request_ranges::kMaxStopTokenIds},
      {"max_bad_word_sequences", request_ranges::kMaxBadWordSequences},
      {"max_bad_word_tokens", request_ranges::kMaxBadWordTokens},
      {"max_queue", o.max_queue},
      {"image", ImageLimitsJson(engine)},
      {"video", VideoLimitsJson(engine)},
  };
  return {
      {"default_generation_settings",
       {{"n_ctx", o.context_tokens}, {"params", GenerationSettingsJson({}, engine)}}},
      {"total_slots", o.max_sequences},
      {"model_path", id},
      {"model_alias", id},
      {"modalities", {{"vision", true}, {"video", true}, {"audio", false}}},
      {"chat_template", FindChatTemplate(engine.model().folder().dir).text},
      {"build_info", BuildInfo()},
      {"limits", std::move(limits)},
  };
}

}  // namespace qvl
