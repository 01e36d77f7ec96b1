// Embed requests (GenerationRequest::embed) on the tiny fixture model: the answer is the
// reference's final-normed hidden state of the prompt's last token, scaled to unit length,
// for every case (text, images, video); nothing is generated; the pages go to the prefix
// cache like an answer's; a batch gives what a lone request gives.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine_test_cases.h"
#include "golden_tensors.h"

namespace qvl {
namespace {

std::vector<float> UnitLength(std::vector<float> v) {
  double squares = 0;
  for (const float x : v) squares += static_cast<double>(x) * x;
  for (float& x : v) x = static_cast<float>(x / std::sqrt(squares));
  return v;
}

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// The case's greedy answer with its tokens reported, to compare with the golden ones.
GenerationRequest AnswerCase(const std::string& name) {
  GenerationRequest r = LoadCase(name);
  r.ignore_eos = true;
  r.top_logprobs = 0;
  return r;
}

GenerationRequest EmbedCase(const std::string& name) {
  GenerationRequest r = LoadCase(name);
  r.embed = true;
  r.max_tokens = 0;
  return r;
}

TEST(EngineEmbedding, IsTheReferencesLastHiddenStateAtUnitLengthForEveryCase) {
  auto engine = MakeEngine();
  for (const std::string& name : CaseNames()) {
    SCOPED_TRACE(name);
    Collector c;
    engine->Submit(EmbedCase(name), c.Sink());
    c.Wait();
    EXPECT_EQ(c.last.finish_reason, FinishReason::kStop);
    EXPECT_EQ(c.last.usage.completion_tokens, 0);
    EXPECT_TRUE(c.tokens.empty());
    EXPECT_EQ(c.text, "");
    const nlohmann::json meta = ReadJson(kCasesDir + "/" + name + "/meta.json");
    EXPECT_EQ(c.last.usage.prompt_tokens, meta["num_prompt_tokens"].get<int64_t>());
    const GoldenTensors golden(kCasesDir + "/" + name);
    const std::vector<float> want = UnitLength(golden.F32("text.final_norm_last"));
    ASSERT_EQ(c.last.embedding.size(), want.size());
    // f32 compute on the checkpoint's bf16 weights: as close as the golden test's hidden
    // states, here after scaling to unit length.
    EXPECT_LE(MaxAbsDiff(c.last.embedding, want), 2e-5f);
    double squares = 0;
    for (const float x : c.last.embedding) squares += static_cast<double>(x) * x;
    EXPECT_NEAR(squares, 1.0, 1e-5);
    EXPECT_GT(c.last.timings.prefill_ms, 0);
  }
}

TEST(EngineEmbedding, ABatchGivesWhatALoneRequestGives) {
  auto engine = MakeEngine();
  Collector alone;
  engine->Submit(EmbedCase("02_one_image_jpeg"), alone.Sink());
  alone.Wait();
  // A fresh engine, so that nothing comes from the prefix cache: the image request
  // prefills beside a text embedding and a streaming answer.
  auto batched = MakeEngine();
  Collector image, text, answer;
  batched->Submit(AnswerCase("01_text_only"), answer.Sink());
  batched->Submit(EmbedCase("01_text_only"), text.Sink());
  batched->Submit(EmbedCase("02_one_image_jpeg"), image.Sink());
  image.Wait();
  text.Wait();
  answer.Wait();
  EXPECT_EQ(image.last.usage.cached_tokens, 0);
  EXPECT_LE(MaxAbsDiff(image.last.embedding, alone.last.embedding), 1e-5f);
  EXPECT_EQ(answer.tokens, GoldenTokens("01_text_only"));
  EXPECT_FALSE(text.last.embedding.empty());
}

TEST(EngineEmbedding, ItsPromptServesTheNextRequestFromThePrefixCache) {
  auto engine = MakeEngine();
  Collector embedded, again, answered;
  engine->Submit(EmbedCase("04_two_turns"), embedded.Sink());
  embedded.Wait();
  engine->Submit(EmbedCase("04_two_turns"), again.Sink());
  again.Wait();
  EXPECT_GT(again.last.usage.cached_tokens, 0);
  EXPECT_LE(MaxAbsDiff(again.last.embedding, embedded.last.embedding), 1e-5f);
  engine->Submit(AnswerCase("04_two_turns"), answered.Sink());
  answered.Wait();
  EXPECT_GT(answered.last.usage.cached_tokens, 0);
  EXPECT_EQ(answered.tokens, GoldenTokens("04_two_turns"));
  EXPECT_EQ(engine->Stats().images_encoded, 1);
}

TEST(EngineEmbedding, ARawPromptHasOneToo) {
  auto engine = MakeEngine();
  GenerationRequest r;
  r.prompt_text = "Describe this image.";
  r.embed = true;
  Collector c;
  engine->Submit(std::move(r), c.Sink());
  c.Wait();
  EXPECT_EQ(c.last.finish_reason, FinishReason::kStop);
  EXPECT_EQ(c.last.usage.prompt_tokens, 4);
  EXPECT_EQ(c.last.embedding.size(),
            static_cast<size_t>(engine->model().config().text.hidden_size));
}

}  // namespace
}  // namespace qvl
