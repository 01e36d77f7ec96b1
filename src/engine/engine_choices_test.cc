// Requests with n answers, logit_bias and grammars on the tiny fixture model: forked
// answers equal the same answers asked for alone, biases move the choice, and a request
// the engine cannot serve names the field.
#include <gtest/gtest.h>

#include "base/field_error.h"
#include "engine/engine_test_cases.h"

namespace qvl {
namespace {

GenerationRequest Sampled(const std::string& name, uint64_t seed) {
  GenerationRequest r = LoadCase(name);
  r.ignore_eos = true;
  r.top_logprobs = 0;
  r.sampling.temperature = 1.5f;
  r.sampling.top_k = 0;
  r.sampling.top_p = 1.0f;
  r.sampling.seed = seed;
  return r;
}

std::vector<int32_t> Alone(Engine& engine, GenerationRequest r) {
  Collector c;
  engine.Submit(std::move(r), c.Sink());
  c.Wait();
  return c.tokens;
}

std::string FieldOf(Engine& engine, GenerationRequest r) {
  Collector c;
  try {
    engine.Submit(std::move(r), c.Sink());
  } catch (const FieldError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.field();
  }
  ADD_FAILURE() << "accepted";
  c.Wait();
  return "";
}

TEST(EngineChoices, GreedyChoicesAllEqualTheReference) {
  auto engine = MakeEngine();
  for (const std::string name : {"01_text_only", "02_one_image_jpeg", "03_two_images"}) {
    SCOPED_TRACE(name);
    GenerationRequest r = LoadCase(name);
    r.ignore_eos = true;
    r.top_logprobs = 0;
    r.n = 3;
    ChoicesCollector c(3);
    engine->Submit(std::move(r), c.Sink());
    c.Wait();
    const nlohmann::json meta = ReadJson(kCasesDir + "/" + name + "/meta.json");
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(c.tokens[i], GoldenTokens(name)) << "choice " << i;
      EXPECT_EQ(c.last[i].finish_reason, FinishReason::kLength);
      EXPECT_EQ(c.last[i].usage.prompt_tokens, meta["num_prompt_tokens"].get<int64_t>());
      EXPECT_EQ(c.last[i].usage.completion_tokens, 16);
    }
  }
  // The prompt was prefilled and each image encoded once per request, not per choice.
  EXPECT_EQ(engine->Stats().images_encoded, 3);
}

// Choice i draws with seed + i, so each forked answer must equal that seed's answer alone:
// the forked KV (shared full pages, a copied partial page) is exactly the leader's.
TEST(EngineChoices, SampledChoicesEqualTheirSeedsAlone) {
  auto engine = MakeEngine();
  for (const std::string name : {"01_text_only", "02_one_image_jpeg"}) {
    SCOPED_TRACE(name);
    GenerationRequest r = Sampled(name, 41);
    r.n = 3;
    ChoicesCollector c(3);
    engine->Submit(std::move(r), c.Sink());
    c.Wait();
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(c.tokens[i], Alone(*engine, Sampled(name, 41 + i))) << "choice " << i;
    }
    EXPECT_NE(c.tokens[0], c.tokens[1]);
  }
}

TEST(EngineChoices, ChoicesStillAgreeWhenTheKvCacheIsTight) {
  EngineOptions options;
  options.kv_cache_bytes = size_t{3} << 20;
  options.max_sequences = 4;
  auto engine = MakeEngine(options);
  GenerationRequest r = Sampled("02_one_image_jpeg", 5);
  r.n = 4;
  ChoicesCollector c(4);
  engine->Submit(std::move(r), c.Sink());
  c.Wait();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(c.tokens[i], Alone(*engine, Sampled("02_one_image_jpeg", 5 + i))) << "choice " << i;
  }
}

TEST(EngineChoices, CancelEndsEveryChoice) {
  auto engine = MakeEngine();
  GenerationRequest r = Sampled("01_text_only", 3);
  r.max_tokens = 16000;
  r.n = 2;
  ChoicesCollector c(2);
  const RequestId id = engine->Submit(std::move(r), c.Sink());
  engine->Cancel(id);
  c.Wait();
  EXPECT_EQ(c.last[0].finish_reason, FinishReason::kCancelled);
  EXPECT_EQ(c.last[1].finish_reason, FinishReason::kCancelled);
}

TEST(EngineChoices, MoreChoicesThanSlotsNameTheField) {
  EngineOptions options;
  options.max_sequences = 2;
  auto engine = MakeEngine(options);
  GenerationRequest r = LoadCase("01_text_only");
  r.n = 3;
  EXPECT_EQ(FieldOf(*engine, std::move(r)), "n");
}

TEST(EngineLogitBias, MovesTheGreedyChoice) {
  auto engine = MakeEngine();
  const std::vector<int32_t> golden = GoldenTokens("01_text_only");
  GenerationRequest banned = LoadCase("01_text_only");
  banned.top_logprobs = 0;
  banned.max_tokens = 1;
  banned.logit_bias = {{golden[0], -100.0f}};
  const std::vector<int32_t> without_first = Alone(*engine, std::move(banned));
  ASSERT_EQ(without_first.size(), 1u);
  EXPECT_NE(without_first[0], golden[0]);

  GenerationRequest forced = LoadCase("01_text_only");
  forced.top_logprobs = 0;
  forced.max_tokens = 3;
  forced.ignore_eos = true;
  forced.logit_bias = {{1234, 100.0f}};
  EXPECT_EQ(Alone(*engine, std::move(forced)), (std::vector<int32_t>{1234, 1234, 1234}));
}

TEST(EngineLogitBias, RefusesTokensOutsideTheVocabularyAndHugeBiases) {
  auto engine = MakeEngine();
  GenerationRequest r = LoadCase("01_text_only");
  r.logit_bias = {{151936, 1.0f}};
  EXPECT_EQ(FieldOf(*engine, r), "logit_bias.151936");
  r.logit_bias = {{5, 101.0f}};
  EXPECT_EQ(FieldOf(*engine, r), "logit_bias.5");
}

}  // namespace
}  // namespace qvl
