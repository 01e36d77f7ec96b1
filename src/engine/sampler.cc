#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "base/field_error.h"
#include "engine/request_ranges.h"
#include "ops/activation.h"

namespace qvl {

namespace {

bool Better(const std::pair<float, int32_t>& a, const std::pair<float, int32_t>& b) {
  return a.first > b.first;
}

bool Listed(const std::vector<SamplerStep>& chain, SamplerStep step) {
  return std::find(chain.begin(), chain.end(), step) != chain.end();
}

// A link the client turned on by name but left out of its chain would be dropped: that is
// an error. A link left out is off, the model's default for it too (as in llama-server).
void LeaveOut(const char* name, bool set_on, const char* field) {
  if (set_on) {
    FailField(ErrorCode::kInvalidArgument, "samplers", "leaves out ", name, ", which ", field,
              " turns on; list it or leave ", field, " out");
  }
}

// The request's own chain over the resolved values.
void ApplyChain(const SamplingParams& r, SamplerConfig* c) {
  const std::vector<SamplerStep>& chain = *r.chain;
  if (!Listed(chain, SamplerStep::kTemperature)) {
    // Greedy stays greedy: temperature 0 is the request's or the model's choice of it.
    LeaveOut("temperature", r.temperature && *r.temperature != 0.0f && *r.temperature != 1.0f,
             "temperature");
    if (c->temperature != 0.0f) c->temperature = 1.0f;
  }
  if (!Listed(chain, SamplerStep::kTopK)) {
    LeaveOut("top_k", r.top_k && *r.top_k > 0, "top_k");
    c->top_k = 0;
  }
  if (!Listed(chain, SamplerStep::kTopP)) {
    LeaveOut("top_p", r.top_p && *r.top_p < 1.0f, "top_p");
    c->top_p = 1.0f;
  }
  if (!Listed(chain, SamplerStep::kMinP)) {
    LeaveOut("min_p", r.min_p && *r.min_p > 0.0f, "min_p");
    c->min_p = 0.0f;
  }
  if (!Listed(chain, SamplerStep::kTypicalP)) {
    LeaveOut("typ_p", c->typical_p < 1.0f, "typical_p");
  }
  if (!Listed(chain, SamplerStep::kTopNSigma)) {
    LeaveOut("top_n_sigma", c->top_n_sigma > 0.0f, "top_n_sigma");
  }
  if (!Listed(chain, SamplerStep::kXtc)) {
    LeaveOut("xtc", c->xtc_probability > 0.0f && c->xtc_threshold <= 0.5f, "xtc_probability");
  }
  const bool penalties_on =
      c->repetition_penalty != 1.0f || c->presence_penalty != 0.0f || c->frequency_penalty != 0.0f;
  if (!Listed(chain, SamplerStep::kPenalties)) {
    LeaveOut("penalties",
             penalties_on && (r.repetition_penalty || r.presence_penalty || r.frequency_penalty),
             "a repetition, presence or frequency penalty");
    c->repetition_penalty = 1.0f;
    c->presence_penalty = c->frequency_penalty = 0.0f;
  } else if (penalties_on && chain.front() != SamplerStep::kPenalties) {
    FailField(ErrorCode::kInvalidArgument, "samplers",
              "must list penalties first when a penalty is on (qvl applies them to every "
              "token's logit before the other samplers)");
  }
  c->chain.clear();
  for (SamplerStep step : chain) {
    if (step != SamplerStep::kPenalties) c->chain.push_back(step);
  }
}

}  // namespace

SamplerConfig ResolveSampling(const SamplingParams& r, const GenerationConfig& g,
                              uint64_t fallback_seed) {
  SamplerConfig c;
  const bool sample_by_default = g.do_sample;
  c.temperature = r.temperature.value_or(sample_by_default ? g.temperature : 0.0f);
  c.top_k = r.top_k.value_or(sample_by_default ? g.top_k : 0);
  c.top_p = r.top_p.value_or(sample_by_default ? g.top_p : 1.0f);
  c.min_p = r.min_p.value_or(g.min_p);
  c.repetition_penalty = r.repetition_penalty.value_or(g.repetition_penalty);
  c.presence_penalty = r.presence_penalty.value_or(0.0f);
  c.frequency_penalty = r.frequency_penalty.value_or(0.0f);
  c.typical_p = r.typical_p.value_or(1.0f);
  c.top_n_sigma = r.top_n_sigma.value_or(-1.0f);
  c.xtc_probability = r.xtc_probability.value_or(0.0f);
  c.xtc_threshold = r.xtc_threshold.value_or(0.1f);
  c.dynatemp_range = r.dynatemp_range.value_or(0.0f);
  c.dynatemp_exponent = r.dynatemp_exponent.value_or(1.0f);
  c.mirostat = r.mirostat.value_or(0);
  c.mirostat_tau = r.mirostat_tau.value_or(5.0f);
  c.mirostat_eta = r.mirostat_eta.value_or(0.1f);
  c.seed = r.seed.value_or(fallback_seed);
  CheckInRange(request_ranges::kTemperature, c.temperature);
  CheckInRange(request_ranges::kTopP, c.top_p);
  CheckInRange(request_ranges::kTopK, c.top_k);
  CheckInRange(request_ranges::kMinP, c.min_p);
  CheckInRange(request_ranges::kRepetitionPenalty, c.repetition_penalty);
  CheckInRange(request_ranges::kPresencePenalty, c.presence_penalty);
  CheckInRange(request_ranges::kFrequencyPenalty, c.frequency_penalty);
  CheckInRange(request_ranges::kTypicalP, c.typical_p);
  CheckInRange(request_ranges::kTopNSigma, c.top_n_sigma);
  CheckInRange(request_ranges::kXtcProbability, c.xtc_probability);
  CheckInRange(request_ranges::kXtcThreshold, c.xtc_threshold);
  CheckInRange(request_ranges::kDynatempRange, c.dynatemp_range);
  CheckInRange(request_ranges::kDynatempExponent, c.dynatemp_exponent);
  CheckInRange(request_ranges::kMirostat, c.mirostat);
  CheckInRange(request_ranges::kMirostatTau, c.mirostat_tau);
  CheckInRange(request_ranges::kMirostatEta, c.mirostat_eta);
  c.top_k = std::max(c.top_k, 0);
  if (r.chain) ApplyChain(r, &c);
  c.greedy = (c.temperature == 0.0f && c.dynatemp_range == 0.0f) || c.top_k == 1;
  return c;
}

Sampler::Sampler(const SamplerConfig& config, int64_t vocab)
    : config_(config),
      vocab_(vocab),
      rng_(config.seed),
      seen_(vocab, 0),
      output_counts_(vocab, 0),
      mu_(2.0f * config.mirostat_tau) {
  candidates_.reserve(vocab);
}

void Sampler::AddPromptTokens(std::span<const int32_t> ids) {
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_ || seen_[id]) continue;
    seen_[id] = 1;
    seen_tokens_.push_back(id);
  }
}

void Sampler::Accept(int32_t id) {
  if (id < 0 || id >= vocab_) return;
  if (output_counts_[id]++ == 0) output_tokens_.push_back(id);
  if (!seen_[id]) {
    seen_[id] = 1;
    seen_tokens_.push_back(id);
  }
}

void Sampler::ApplyPenalties(float* logits) const {
  if (config_.repetition_penalty != 1.0f) {
    // transformers' RepetitionPenaltyLogitsProcessor over prompt and output tokens.
    for (int32_t id : seen_tokens_) {
      float& l = logits[id];
      l = l < 0 ? l * config_.repetition_penalty : l / config_.repetition_penalty;
    }
  }
  if (config_.presence_penalty != 0.0f || config_.frequency_penalty != 0.0f) {
    for (int32_t id : output_tokens_) {
      logits[id] -= config_.presence_penalty + config_.frequency_penalty * output_counts_[id];
    }
  }
}

int32_t Sampler::Sample(float* logits) {
  ApplyPenalties(logits);
  if (config_.greedy) {
    return static_cast<int32_t>(std::max_element(logits, logits + vocab_) - logits);
  }
  candidates_.clear();
  for (int64_t i = 0; i < vocab_; ++i) candidates_.push_back({logits[i], static_cast<int32_t>(i)});
  if (config_.mirostat != 0) {
    const float inv_t = 1.0f / config_.temperature;
    for (auto& c : candidates_) c.first *= inv_t;
    return DrawMirostat();
  }
  bool sorted = false;
  for (SamplerStep step : config_.chain) {
    switch (step) {
      case SamplerStep::kTemperature:
        ApplyTemperature();
        break;
      case SamplerStep::kTopK:
        KeepTopK(&sorted);
        break;
      case SamplerStep::kTopP:
        KeepTopP(&sorted);
        break;
      case SamplerStep::kMinP:
        KeepMinP(&sorted);
        break;
      case SamplerStep::kTypicalP:
        KeepTypical(&sorted);
        break;
      case SamplerStep::kTopNSigma:
        KeepTopNSigma();
        break;
      case SamplerStep::kXtc:
        ExcludeTopChoices(&sorted);
        break;
      case SamplerStep::kPenalties:
        break;  // applied above, to every logit
    }
  }
  const float max_logit =
      sorted ? candidates_[0].first
             : std::max_element(candidates_.begin(), candidates_.end(), Better)->first;
  double kept = 0;
  for (auto& c : candidates_) kept += (c.first = std::exp(c.first - max_logit));
  std::uniform_real_distribution<double> uniform(0.0, kept);
  double r = uniform(rng_);
  for (const auto& c : candidates_) {
    r -= c.first;
    if (r <= 0) return c.second;
  }
  return candidates_.back().second;
}

void Sampler::SortCandidates(bool* sorted) {
  if (!*sorted) std::sort(candidates_.begin(), candidates_.end(), Better);
  *sorted = true;
}

void Sampler::KeepTopK(bool* sorted) {
  if (config_.top_k <= 0 || static_cast<size_t>(config_.top_k) >= candidates_.size()) return;
  const size_t keep = config_.top_k;
  if (!*sorted) {
    std::nth_element(candidates_.begin(), candidates_.begin() + keep, candidates_.end(), Better);
  }
  candidates_.resize(keep);
}

void Sampler::KeepTopP(bool* sorted) {
  if (config_.top_p >= 1.0f) return;
  SortCandidates(sorted);
  Probabilities(candidates_[0].first);
  // Smallest prefix whose mass reaches top_p (at least one token).
  double mass = 0;
  size_t n = 0;
  while (n < candidates_.size()) {
    mass += probs_[n++];
    if (mass >= config_.top_p) break;
  }
  candidates_.resize(n);
}

void Sampler::KeepMinP(bool* sorted) {
  if (config_.min_p <= 0.0f) return;
  SortCandidates(sorted);
  // Keep tokens with probability >= min_p * the best one's.
  const float max_logit = candidates_[0].first;
  size_t n = 1;
  while (n < candidates_.size() && std::exp(candidates_[n].first - max_logit) >= config_.min_p) {
    ++n;
  }
  candidates_.resize(n);
}

void Sampler::ApplyTemperature() {
  float temperature = config_.temperature;
  if (config_.dynatemp_range > 0.0f && candidates_.size() > 1) {
    // The candidates' entropy over the most they could have (all alike) sets the
    // temperature between temperature - range (never below 0) and temperature + range.
    const float low = std::max(0.0f, temperature - config_.dynatemp_range);
    const float high = temperature + config_.dynatemp_range;
    const float max_logit = std::max_element(candidates_.begin(), candidates_.end(), Better)->first;
    Probabilities(max_logit);
    double entropy = 0;
    for (const double p : probs_) {
      if (p > 0) entropy -= p * std::log(p);
    }
    const double evenness = entropy / std::log(static_cast<double>(candidates_.size()));
    temperature =
        low + (high - low) * static_cast<float>(std::pow(evenness, config_.dynatemp_exponent));
  }
  if (temperature <= 0.0f) {
    // As cold as it gets: the best candidate alone.
    const auto best = std::max_element(candidates_.begin(), candidates_.end(), Better);
    std::iter_swap(candidates_.begin(), best);
    candidates_.resize(1);
    return;
  }
  const float inv_t = 1.0f / temperature;
  for (auto& c : candidates_) c.first *= inv_t;
}

double Sampler::Probabilities(float max_logit) {
  probs_.clear();
  double total = 0;
  for (const auto& c : candidates_) total += probs_.emplace_back(std::exp(c.first - max_logit));
  for (double& p : probs_) p /= total;
  return std::log(total);
}

void Sampler::KeepTypical(bool* sorted) {
  if (config_.typical_p >= 1.0f) return;
  SortCandidates(sorted);
  const float max_logit = candidates_[0].first;
  const double log_total = Probabilities(max_logit);
  // A candidate's surprise, -log p, and the entropy: the surprise a token has on average.
  const auto surprise = [&](size_t i) { return log_total - (candidates_[i].first - max_logit); };
  double entropy = 0;
  for (size_t i = 0; i < candidates_.size(); ++i) {
    if (probs_[i] > 0) entropy += probs_[i] * surprise(i);
  }
  typical_order_.reserve(static_cast<size_t>(vocab_));
  typical_order_.clear();
  for (size_t i = 0; i < candidates_.size(); ++i) {
    typical_order_.push_back({std::abs(surprise(i) - entropy), i});
  }
  std::sort(typical_order_.begin(), typical_order_.end());
  // The tokens whose surprise is closest to the entropy, until their mass is above
  // typical_p (at least one).
  kept_.reserve(static_cast<size_t>(vocab_));
  kept_.clear();
  double mass = 0;
  for (const auto& [distance, i] : typical_order_) {
    kept_.push_back(candidates_[i]);
    mass += probs_[i];
    if (mass > config_.typical_p) break;
  }
  candidates_.swap(kept_);
  *sorted = false;
}

void Sampler::KeepTopNSigma() {
  if (config_.top_n_sigma <= 0.0f || candidates_.size() <= 1) return;
  constexpr float kBanned = -std::numeric_limits<float>::infinity();
  float max_logit = kBanned;
  double sum = 0;
  size_t valid = 0;
  for (const auto& c : candidates_) {
    if (c.first == kBanned) continue;
    max_logit = std::max(max_logit, c.first);
    sum += c.first;
    ++valid;
  }
  if (valid == 0) return;
  const double mean = sum / static_cast<double>(valid);
  double squares = 0;
  for (const auto& c : candidates_) {
    if (c.first != kBanned) squares += (c.first - mean) * (c.first - mean);
  }
  const double sigma = std::sqrt(squares / static_cast<double>(valid));
  const double floor = max_logit - config_.top_n_sigma * sigma;
  std::erase_if(candidates_, [&](const auto& c) { return c.first < floor; });
}

void Sampler::ExcludeTopChoices(bool* sorted) {
  if (config_.xtc_probability <= 0.0f || config_.xtc_threshold > 0.5f || candidates_.size() < 2) {
    return;
  }
  if (std::uniform_real_distribution<float>(0.0f, 1.0f)(rng_) > config_.xtc_probability) return;
  SortCandidates(sorted);
  Probabilities(candidates_[0].first);
  // All the tokens at or above the threshold but the least likely of them.
  size_t last = 0;
  while (last + 1 < candidates_.size() && probs_[last + 1] >= config_.xtc_threshold) ++last;
  candidates_.erase(candidates_.begin(), candidates_.begin() + static_cast<ptrdiff_t>(last));
}

int32_t Sampler::DrawMirostat() {
  bool sorted = false;
  SortCandidates(&sorted);
  Probabilities(candidates_[0].first);
  size_t keep = 0;
  if (config_.mirostat == 1) {
    // Zipf's exponent s estimated from the 100 most likely tokens, and from it the k whose
    // top-k draw has surprise mu.
    constexpr size_t kEstimateTokens = 100;
    double sum_tb = 0, sum_tt = 0;
    for (size_t i = 0; i + 1 < kEstimateTokens && i + 1 < candidates_.size(); ++i) {
      const double t = std::log(static_cast<double>(i + 2) / static_cast<double>(i + 1));
      const double b = std::log(probs_[i] / probs_[i + 1]);
      sum_tb += t * b;
      sum_tt += t * t;
    }
    const double s = sum_tb / sum_tt;
    const double epsilon = s - 1;
    const double k = std::pow(
        epsilon * std::pow(2.0, mu_) / (1 - std::pow(static_cast<double>(vocab_), -epsilon)),
        1 / s);
    keep = std::isfinite(k) ? static_cast<size_t>(std::clamp(k, 1.0, 1e9)) : candidates_.size();
  } else {
    // The tokens whose surprise, -log2 p, is at most mu (at least one).
    while (keep < candidates_.size() && -std::log2(probs_[keep]) <= mu_) ++keep;
  }
  candidates_.resize(std::clamp<size_t>(keep, 1, candidates_.size()));
  Probabilities(candidates_[0].first);
  double r = std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
  size_t pick = 0;
  while (pick + 1 < candidates_.size() && (r -= probs_[pick]) > 0) ++pick;
  const double surprise = -std::log2(probs_[pick]);
  mu_ -= config_.mirostat_eta * static_cast<float>(surprise - config_.mirostat_tau);
  return candidates_[pick].second;
}

int32_t RankOf(const float* logits, int64_t vocab, int32_t token) {
  const float own = logits[token];
  int32_t above = 0;
  for (int64_t i = 0; i < vocab; ++i) above += logits[i] > own ? 1 : 0;
  return above + 1;
}

void TopLogprobs(const float* logits, int64_t vocab, int32_t chosen, int n, float* chosen_logprob,
                 std::vector<std::pair<int32_t, float>>* top) {
  const float log_z = LogSumExp(logits, vocab);
  *chosen_logprob = logits[chosen] - log_z;
  top->clear();
  if (n <= 0) return;
  // A running top-n over the vocabulary: n is at most 20.
  for (int64_t i = 0; i < vocab; ++i) {
    const float l = logits[i];
    if (static_cast<int>(top->size()) == n && l <= top->back().second) continue;
    auto it = std::find_if(top->begin(), top->end(), [&](const auto& p) { return l > p.second; });
    top->insert(it, {static_cast<int32_t>(i), l});
    if (static_cast<int>(top->size()) > n) top->pop_back();
  }
  for (auto& p : *top) p.second -= log_z;
}

}  // namespace qvl
