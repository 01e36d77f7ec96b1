// Turns a row of logits into the next token: penalties, temperature, top-k, top-p,
// min-p, locally typical sampling, top-n-sigma and XTC, then a draw from the request's own
// random stream (reproducible with a seed). The default order follows transformers'
// generate(): repetition penalty, then the OpenAI presence / frequency penalties,
// temperature, top-k, top-p, min-p, typical-p; top-n-sigma (which no temperature changes)
// comes first and XTC last. A request may give another order (SamplingParams::chain), as
// llama-server's clients do. Mirostat, as llama.cpp's, stands in for the whole chain but
// the temperature: it truncates and draws itself, steering the surprise of what it draws
// towards a target.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "engine/request.h"
#include "model/config.h"

namespace qvl {

struct SamplerConfig {
  bool greedy = true;
  float temperature = 1.0f;
  int top_k = 0;  // 0 = off
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  float typical_p = 1.0f;     // 1 = off
  float top_n_sigma = -1.0f;  // <= 0 = off
  float xtc_probability = 0.0f;
  float xtc_threshold = 0.1f;  // above 0.5 = off
  float dynatemp_range = 0.0f;
  float dynatemp_exponent = 1.0f;
  int mirostat = 0;  // 0 = off, 1 or 2
  float mirostat_tau = 5.0f;
  float mirostat_eta = 0.1f;
  uint64_t seed = 0;
  // After the penalties, which always come first.
  std::vector<SamplerStep> chain = {
      SamplerStep::kTopNSigma, SamplerStep::kTemperature, SamplerStep::kTopK, SamplerStep::kTopP,
      SamplerStep::kMinP,      SamplerStep::kTypicalP,    SamplerStep::kXtc};
};

// Request values over generation_config.json defaults; temperature 0 means greedy.
// Throws FieldError(kInvalidArgument) naming the parameter when a value is outside its
// range in request_ranges.h.
SamplerConfig ResolveSampling(const SamplingParams& request, const GenerationConfig& defaults,
                              uint64_t fallback_seed);

class Sampler {
 public:
  Sampler(const SamplerConfig& config, int64_t vocab);

  // Marks tokens of the prompt (repetition penalty applies to them too).
  void AddPromptTokens(std::span<const int32_t> ids);
  // Records a generated token (all penalties apply to it).
  void Accept(int32_t id);

  // Picks the next token from `logits` (modified in place). Allocation-free after the
  // first call.
  int32_t Sample(float* logits);

  const SamplerConfig& config() const { return config_; }

 private:
  void ApplyPenalties(float* logits) const;
  // The chain's links over candidates_ (scaled logits); `sorted`: best first.
  void SortCandidates(bool* sorted);
  void KeepTopK(bool* sorted);
  void KeepTopP(bool* sorted);
  void KeepMinP(bool* sorted);
  // The temperature link: config_.temperature, or llama.cpp's dynamic temperature.
  void ApplyTemperature();
  // llama.cpp's llama_sampler_typical, top_n_sigma and xtc over candidates_.
  void KeepTypical(bool* sorted);
  void KeepTopNSigma();
  void ExcludeTopChoices(bool* sorted);
  // llama.cpp's llama_sampler_mirostat (version 1) and mirostat_v2 over candidates_ at
  // their temperature: the token drawn, with mu_ moved towards the target surprise.
  int32_t DrawMirostat();
  // The candidates' probabilities into probs_ (same order); returns the log of the sum of
  // exp(logit - max).
  double Probabilities(float max_logit);

  SamplerConfig config_;
  int64_t vocab_;
  std::mt19937_64 rng_;
  std::vector<uint8_t> seen_;           // token occurs in prompt or output
  std::vector<int32_t> output_counts_;  // occurrences in the output
  std::vector<int32_t> output_tokens_;  // distinct output tokens, for the penalties
  std::vector<int32_t> seen_tokens_;    // distinct tokens of prompt and output
  std::vector<std::pair<float, int32_t>> candidates_;
  float mu_;                   // Mirostat's surprise bound, 2 tau at first
  std::vector<double> probs_;  // Probabilities' output
  // KeepTypical's scratch: (distance from the entropy, candidate), and the tokens kept.
  std::vector<std::pair<double, size_t>> typical_order_;
  std::vector<std::pair<float, int32_t>> kept_;
};

// 1 + how many tokens have larger logits than `token`: its rank, 1 for the most likely
// (vLLM's rank of a logprob; a tie shares the better rank).
int32_t RankOf(const float* logits, int64_t vocab, int32_t token);

// log-softmax of the raw logits for the chosen token and the `n` most likely ones.
void TopLogprobs(const float* logits, int64_t vocab, int32_t chosen, int n, float* chosen_logprob,
                 std::vector<std::pair<int32_t, float>>* top);

}  // namespace qvl
