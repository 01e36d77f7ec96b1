#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/field_error.h"

namespace qvl {
namespace {

SamplerConfig Greedy() {
  SamplingParams p;
  p.temperature = 0.0f;
  return ResolveSampling(p, GenerationConfig(), 1);
}

// A generation_config.json that samples, as Qwen3-VL's does.
GenerationConfig SamplingDefaults() {
  GenerationConfig g;
  g.do_sample = true;
  g.temperature = 0.7f;
  g.top_k = 20;
  g.top_p = 0.8f;
  return g;
}

TEST(ResolveSampling, RequestOverridesGenerationConfig) {
  const GenerationConfig g = SamplingDefaults();
  SamplingParams r;
  SamplerConfig c = ResolveSampling(r, g, 5);
  EXPECT_FALSE(c.greedy);
  EXPECT_FLOAT_EQ(c.temperature, 0.7f);
  EXPECT_EQ(c.top_k, 20);
  EXPECT_FLOAT_EQ(c.top_p, 0.8f);
  EXPECT_EQ(c.seed, 5u);
  r.temperature = 0.0f;
  r.seed = 42;
  c = ResolveSampling(r, g, 5);
  EXPECT_TRUE(c.greedy);
  EXPECT_EQ(c.seed, 42u);
  // Without do_sample the defaults are greedy.
  EXPECT_TRUE(ResolveSampling(SamplingParams(), GenerationConfig(), 1).greedy);
}

TEST(ResolveSampling, RejectsOutOfRangeNamingTheParameter) {
  SamplingParams r;
  r.top_p = 1.5f;
  try {
    ResolveSampling(r, GenerationConfig(), 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("top_p"), std::string::npos);
  }
  r = SamplingParams();
  r.temperature = -1.0f;
  EXPECT_THROW(ResolveSampling(r, GenerationConfig(), 1), Error);
}

TEST(Sampler, GreedyPicksArgmax) {
  Sampler s(Greedy(), 5);
  std::vector<float> logits = {0.1f, 3.0f, -1.0f, 2.9f, 0.0f};
  EXPECT_EQ(s.Sample(logits.data()), 1);
}

TEST(Sampler, RepetitionPenaltyFollowsTransformers) {
  SamplingParams p;
  p.temperature = 0.0f;
  p.repetition_penalty = 2.0f;
  Sampler s(ResolveSampling(p, GenerationConfig(), 1), 4);
  s.AddPromptTokens(std::vector<int32_t>{1});
  std::vector<float> logits = {1.0f, 3.0f, -1.0f, 2.0f};
  // Token 1 is divided by 2 (1.5) and loses to token 3 (2.0).
  EXPECT_EQ(s.Sample(logits.data()), 3);
  EXPECT_FLOAT_EQ(logits[1], 1.5f);
}

TEST(Sampler, PresenceAndFrequencyPenalizeOutputOnly) {
  SamplingParams p;
  p.temperature = 0.0f;
  p.presence_penalty = 0.5f;
  p.frequency_penalty = 0.25f;
  Sampler s(ResolveSampling(p, GenerationConfig(), 1), 3);
  s.AddPromptTokens(std::vector<int32_t>{0});
  s.Accept(2);
  s.Accept(2);
  std::vector<float> logits = {1.0f, 0.0f, 1.9f};
  EXPECT_EQ(s.Sample(logits.data()), 0);
  EXPECT_FLOAT_EQ(logits[2], 1.9f - 0.5f - 0.5f);
  EXPECT_FLOAT_EQ(logits[0], 1.0f);
}

std::map<int32_t, int> Draw(const SamplingParams& p, const std::vector<float>& base, int n) {
  Sampler s(ResolveSampling(p, GenerationConfig(), 7), static_cast<int64_t>(base.size()));
  std::map<int32_t, int> counts;
  for (int i = 0; i < n; ++i) {
    std::vector<float> logits = base;
    counts[s.Sample(logits.data())]++;
  }
  return counts;
}

TEST(Sampler, TopKTopPMinPRestrictCandidates) {
  const std::vector<float> base = {2.0f, 1.9f, 1.0f, 0.0f, -5.0f};
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 2;
  auto c = Draw(p, base, 2000);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_GT(c[0], c[1]);
  p = SamplingParams();
  p.temperature = 1.0f;
  p.top_p = 0.5f;  // token 0 alone has ~0.42, so tokens 0 and 1 are kept
  c = Draw(p, base, 2000);
  EXPECT_EQ(c.size(), 2u);
  p = SamplingParams();
  p.temperature = 1.0f;
  p.min_p = 0.3f;  // keeps tokens with p >= 0.3 * p_max: 0, 1 and 2 (e^-1 = 0.37)
  c = Draw(p, base, 4000);
  EXPECT_EQ(c.size(), 3u);
}

// llama-server's chain ends with the temperature: its top_p sees the probabilities at
// temperature 1, transformers' at the request's temperature.
TEST(Sampler, TheChainOrdersTheTemperatureAndTheTruncations) {
  const std::vector<float> base = {2.0f, 0.0f};  // at temperature 1: p = 0.88, 0.12
  SamplingParams p;
  p.temperature = 2.0f;  // at 2: p = 0.73, 0.27
  p.top_p = 0.8f;
  EXPECT_EQ(Draw(p, base, 400).size(), 2u);
  p.chain = {SamplerStep::kTopP, SamplerStep::kTemperature};
  EXPECT_EQ(Draw(p, base, 400), (std::map<int32_t, int>{{0, 400}}));
  // min_p likewise: the second is e^-2 = 0.14 of the first at temperature 1, e^-1 = 0.37 at 2.
  p = SamplingParams();
  p.temperature = 2.0f;
  p.min_p = 0.3f;
  EXPECT_EQ(Draw(p, base, 400).size(), 2u);
  p.chain = {SamplerStep::kMinP, SamplerStep::kTemperature};
  EXPECT_EQ(Draw(p, base, 400).size(), 1u);
  // top_k after a truncation that sorted the candidates keeps the best k of them.
  p = SamplingParams();
  p.temperature = 1.0f;
  p.top_p = 0.99f;
  p.top_k = 2;
  p.chain = {SamplerStep::kTopP, SamplerStep::kTopK, SamplerStep::kTemperature};
  const auto two = Draw(p, {2.0f, 1.9f, 1.0f, 0.0f, -5.0f}, 2000);
  EXPECT_EQ(two.size(), 2u);
  EXPECT_GT(two.at(0), two.at(1));
  // transformers' order given explicitly draws what the default draws.
  p = SamplingParams();
  p.temperature = 0.7f;
  p.top_k = 3;
  p.top_p = 0.9f;
  p.min_p = 0.05f;
  const std::vector<float> wide = {1.0f, 0.8f, 0.7f, 0.2f, 0.1f, -0.3f};
  const auto by_default = Draw(p, wide, 300);
  p.chain = {SamplerStep::kPenalties, SamplerStep::kTemperature, SamplerStep::kTopK,
             SamplerStep::kTopP, SamplerStep::kMinP};
  EXPECT_EQ(Draw(p, wide, 300), by_default);
}

// llama.cpp's typical sampling: p = 0.415, 0.376, 0.153, 0.056, 0.0004, entropy 1.18 nats;
// the tokens whose surprise (-ln p: 0.88, 0.98, 1.88, 2.88, 7.9) is closest to it come
// first, until their mass is above typical_p. So the most likely token may be left out.
TEST(Sampler, TypicalPKeepsTheTokensOfTypicalSurprise) {
  const std::vector<float> base = {2.0f, 1.9f, 1.0f, 0.0f, -5.0f};
  SamplingParams p;
  p.temperature = 1.0f;
  p.typical_p = 0.3f;
  EXPECT_EQ(Draw(p, base, 300), (std::map<int32_t, int>{{1, 300}}));
  p.typical_p = 0.5f;
  auto c = Draw(p, base, 2000);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_GT(c[0], c[1]);
  p.typical_p = 0.9f;
  EXPECT_EQ(Draw(p, base, 4000).size(), 3u);
}

// llama.cpp's top-n-sigma: logits below max - n sigma (here sigma = 2.59) are out, at any
// temperature.
TEST(Sampler, TopNSigmaKeepsTheLogitsNearTheBest) {
  const std::vector<float> base = {2.0f, 1.9f, 1.0f, 0.0f, -5.0f};
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_n_sigma = 0.03f;  // floor 1.92
  EXPECT_EQ(Draw(p, base, 200), (std::map<int32_t, int>{{0, 200}}));
  p.top_n_sigma = 0.5f;  // floor 0.70
  EXPECT_EQ(Draw(p, base, 4000).size(), 3u);
  p.temperature = 2.0f;
  EXPECT_EQ(Draw(p, base, 4000).size(), 3u);
  p.top_n_sigma = -1.0f;
  EXPECT_EQ(Draw(p, base, 8000).size(), 5u);
}

// llama.cpp's XTC: with probability xtc_probability, every token at or above the threshold
// but the least likely of them is out.
TEST(Sampler, XtcExcludesTheTopChoices) {
  const std::vector<float> base = {2.0f, 1.9f, 1.0f, 0.0f, -5.0f};
  SamplingParams p;
  p.temperature = 1.0f;
  p.xtc_probability = 1.0f;
  p.xtc_threshold = 0.3f;  // tokens 0 and 1 are above it: 0 goes
  auto c = Draw(p, base, 2000);
  EXPECT_EQ(c.count(0), 0u);
  EXPECT_GT(c[1], c[2]);
  p.xtc_threshold = 0.4f;  // token 0 alone: nothing goes
  EXPECT_GT(Draw(p, base, 2000)[0], 0);
  p.xtc_threshold = 0.6f;  // above 0.5: off
  EXPECT_GT(Draw(p, base, 2000)[0], 0);
  p.xtc_threshold = 0.3f;
  p.xtc_probability = 0.5f;  // token 0 goes in about half the draws
  c = Draw(p, base, 4000);
  EXPECT_GT(c[0], 400);
  EXPECT_LT(c[0], 1300);
}

// llama.cpp's dynamic temperature: temperature ± range by the candidates' entropy over
// the most they could have (here 1.18 / ln 5 = 0.74), to the exponent. Exponent 0 always
// gives the top of the range, so it draws what that temperature draws.
TEST(Sampler, DynamicTemperatureFollowsTheEntropy) {
  const std::vector<float> base = {2.0f, 1.9f, 1.0f, 0.0f, -5.0f};
  SamplingParams p;
  p.temperature = 1.0f;
  p.dynatemp_range = 1.0f;
  p.dynatemp_exponent = 0.0f;
  SamplingParams hot;
  hot.temperature = 2.0f;
  EXPECT_EQ(Draw(p, base, 500), Draw(hot, base, 500));
  // Exponent 10: 0.74^10 = 0.047 of the range (0 to 2), temperature 0.093: token 1 at
  // e^-1.07 of token 0 (p = 0.745, 0.255), the rest out of reach.
  p.dynatemp_exponent = 10.0f;
  const auto cold = Draw(p, base, 2000);
  EXPECT_EQ(cold.size(), 2u);
  EXPECT_GT(cold.at(0), 1400);
  EXPECT_LT(cold.at(0), 1580);
  // Temperature 0 with a range samples (llama.cpp's range starts at 0 then).
  p.temperature = 0.0f;
  EXPECT_FALSE(ResolveSampling(p, GenerationConfig(), 1).greedy);
  p.dynatemp_range = 0.0f;
  EXPECT_TRUE(ResolveSampling(p, GenerationConfig(), 1).greedy);
}

// llama.cpp's Mirostat 2: mu starts at 2 tau bits and keeps the tokens whose surprise
// (-log2 p) is at most mu; each draw moves mu by eta times (its surprise - tau). Here p =
// 0.415, 0.376, 0.153, 0.056, 0.0004 (surprise 1.27, 1.41, 2.71, 4.15, 11.4 bits).
TEST(Sampler, MirostatTwoKeepsTheTokensUnderItsSurpriseBound) {
  const std::vector<float> base = {2.0f, 1.9f, 1.0f, 0.0f, -5.0f};
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 1000;  // stood in for by Mirostat, as in llama.cpp
  p.mirostat = 2;
  p.mirostat_tau = 0.5f;  // mu 1: not even the best token, which is kept all the same
  p.mirostat_eta = 0.0f;
  EXPECT_EQ(Draw(p, base, 200), (std::map<int32_t, int>{{0, 200}}));
  p.mirostat_tau = 1.5f;  // mu 3: the first three
  EXPECT_EQ(Draw(p, base, 3000).size(), 3u);
  // With a learning rate, mu falls after draws more surprising than tau and rises after
  // less surprising ones: a target of 0.2 bits mostly leaves the best token alone (mu
  // cycles below its 1.27 bits four draws in five).
  p.mirostat_tau = 0.2f;
  p.mirostat_eta = 1.0f;
  const auto steered = Draw(p, base, 2000);
  EXPECT_GT(steered.at(0), 1500);
}

// Mirostat 1 keeps the k tokens (from a Zipf exponent fit to the best 100) whose top-k
// draw has surprise mu: with mu near 0, k is 1.
TEST(Sampler, MirostatOneKeepsTheTopKItEstimates) {
  std::vector<float> base(200);
  for (size_t i = 0; i < base.size(); ++i) base[i] = -std::log(static_cast<float>(i + 1));
  SamplingParams p;
  p.temperature = 1.0f;
  p.mirostat = 1;
  p.mirostat_tau = 0.0f;
  p.mirostat_eta = 0.0f;
  EXPECT_EQ(Draw(p, base, 100), (std::map<int32_t, int>{{0, 100}}));
  p.mirostat_tau = 3.0f;  // mu 6 bits
  const auto wide = Draw(p, base, 2000);
  EXPECT_GT(wide.size(), 5u);
  EXPECT_LT(wide.rbegin()->first, 200);
}

// The message of the FieldError ResolveSampling raises on `samplers`.
std::string ChainError(const SamplingParams& p, const GenerationConfig& g = GenerationConfig()) {
  try {
    ResolveSampling(p, g, 1);
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "samplers");
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(ResolveSampling, ALinkLeftOutOfTheChainIsOff) {
  GenerationConfig g = SamplingDefaults();
  g.repetition_penalty = 1.05f;
  SamplingParams r;
  r.chain = std::vector<SamplerStep>{SamplerStep::kTopP};
  const SamplerConfig c = ResolveSampling(r, g, 1);
  EXPECT_FALSE(c.greedy);
  EXPECT_FLOAT_EQ(c.temperature, 1.0f);
  EXPECT_EQ(c.top_k, 0);
  EXPECT_FLOAT_EQ(c.top_p, 0.8f);
  EXPECT_FLOAT_EQ(c.repetition_penalty, 1.0f);
  EXPECT_EQ(c.chain, std::vector<SamplerStep>{SamplerStep::kTopP});
  // A request that turns one on by name and leaves it out asks two things at once.
  r.top_k = 40;
  EXPECT_EQ(ChainError(r, g),
            "samplers: leaves out top_k, which top_k turns on; list it or leave top_k out");
  r = SamplingParams();
  r.chain = std::vector<SamplerStep>{};
  r.presence_penalty = 0.5f;
  EXPECT_EQ(ChainError(r),
            "samplers: leaves out penalties, which a repetition, presence or frequency penalty "
            "turns on; list it or leave a repetition, presence or frequency penalty out");
  r.chain = std::vector<SamplerStep>{SamplerStep::kTopK, SamplerStep::kPenalties};
  EXPECT_EQ(ChainError(r),
            "samplers: must list penalties first when a penalty is on (qvl applies them to "
            "every token's logit before the other samplers)");
  r = SamplingParams();
  r.chain = std::vector<SamplerStep>{SamplerStep::kTopK};
  r.typical_p = 0.9f;
  EXPECT_EQ(ChainError(r),
            "samplers: leaves out typ_p, which typical_p turns on; list it or leave typical_p out");
  r.typical_p = 1.0f;
  r.xtc_probability = 0.5f;
  EXPECT_EQ(ChainError(r),
            "samplers: leaves out xtc, which xtc_probability turns on; list it or "
            "leave xtc_probability out");
  r.xtc_threshold = 0.9f;  // XTC off after all
  EXPECT_NO_THROW(ResolveSampling(r, GenerationConfig(), 1));
  // Greedy stays greedy without a temperature link.
  r = SamplingParams();
  r.temperature = 0.0f;
  r.chain = std::vector<SamplerStep>{SamplerStep::kTopK};
  EXPECT_TRUE(ResolveSampling(r, GenerationConfig(), 1).greedy);
}

TEST(Sampler, SeedMakesDrawsReproducible) {
  const std::vector<float> base = {0.5f, 0.4f, 0.3f, 0.2f, 0.1f, 0.0f};
  SamplingParams p;
  p.temperature = 1.0f;
  p.seed = 1234;
  auto a = Draw(p, base, 50), b = Draw(p, base, 50);
  EXPECT_EQ(a, b);
}

TEST(TopLogprobs, LogSoftmaxOfChosenAndBest) {
  const std::vector<float> logits = {0.0f, 2.0f, 1.0f};
  float chosen = 0;
  std::vector<std::pair<int32_t, float>> top;
  TopLogprobs(logits.data(), 3, 2, 2, &chosen, &top);
  const double z = std::log(1 + std::exp(2.0) + std::exp(1.0));
  EXPECT_NEAR(chosen, 1.0 - z, 1e-5);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].first, 1);
  EXPECT_EQ(top[1].first, 2);
  EXPECT_NEAR(top[0].second, 2.0 - z, 1e-5);
}

TEST(RankOf, OnePlusTheTokensMoreLikely) {
  const std::vector<float> logits = {0.0f, 2.0f, 1.0f, 2.0f, -1.0f};
  EXPECT_EQ(RankOf(logits.data(), 5, 1), 1);
  EXPECT_EQ(RankOf(logits.data(), 5, 3), 1);  // a tie shares the better rank
  EXPECT_EQ(RankOf(logits.data(), 5, 2), 3);
  EXPECT_EQ(RankOf(logits.data(), 5, 4), 5);
}

}  // namespace
}  // namespace qvl
