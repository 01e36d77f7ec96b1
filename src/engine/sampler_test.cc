#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "base/error.h"

namespace qvl {
namespace {

SamplerConfig Greedy() {
  SamplingParams p;
  p.temperature = 0.0f;
  return ResolveSampling(p, GenerationConfig(), 1);
}

TEST(ResolveSampling, RequestOverridesGenerationConfig) {
  GenerationConfig g;
  g.do_sample = true;
  g.temperature = 0.7f;
  g.top_k = 20;
  g.top_p = 0.8f;
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

}  // namespace
}  // namespace qvl
