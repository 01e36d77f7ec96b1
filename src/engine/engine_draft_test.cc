// Speculative decoding leaves every answer as it was: the same tokens
// and the same logprobs as decoding one token per step, greedy, sampled with a seed, and
// constrained by a grammar (drafts from the prompt and from the grammar's fixed keys),
// in a batch.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_test_cases.h"
#include "grammar/grammar.h"
#include "model/model_folder_for_test.h"
#include "model/qwen3vl.h"
#include "ops/linear.h"
#include "text/reasoning_split.h"
#include "text/test_tokenizer.h"

namespace qvl {
namespace {

// Tokens and chosen logprobs of each answer, collected from the updates.
struct Answer {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
  std::vector<std::vector<int32_t>> alternatives;
  Timings timings;
  FinishReason finish = FinishReason::kNone;
};

// q8 weights (or `format`), whose kernels serve several rows per read of a weight panel,
// so that drafts fit beside three sequences decoding at once (engine.cc's draft room).
std::unique_ptr<Engine> MakeEngine(int draft_tokens, EngineOptions options = EngineOptions(),
                                   WeightFormat format = WeightFormat::kQ8,
                                   const std::string& model_dir = kModelDir) {
  ModelOptions m;
  m.text_weights = m.vision_weights = format;
  m.weight_cache_dir = "none";
  options.threads = 2;
  options.max_sequences = 3;
  options.draft_tokens = draft_tokens;
  return std::make_unique<Engine>(Qwen3VLModel::Load(model_dir, m), options);
}

std::vector<Answer> RunAll(int draft_tokens, const std::vector<GenerationRequest>& requests,
                           const EngineOptions& options = EngineOptions(),
                           WeightFormat format = WeightFormat::kQ8,
                           const std::string& model_dir = kModelDir) {
  auto engine = MakeEngine(draft_tokens, options, format, model_dir);
  std::vector<std::unique_ptr<Collector>> collectors;
  std::vector<Answer> answers(requests.size());
  std::vector<std::vector<GeneratedToken>> streamed(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    collectors.push_back(std::make_unique<Collector>());
    UpdateSink collect = collectors.back()->Sink();
    engine->Submit(requests[i], [&streamed, i, collect](GenerationUpdate&& u) {
      for (const GeneratedToken& t : u.tokens) streamed[i].push_back(t);
      collect(std::move(u));
    });
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    collectors[i]->Wait();
    for (const GeneratedToken& t : streamed[i]) {
      answers[i].tokens.push_back(t.chosen.id);
      answers[i].logprobs.push_back(t.chosen.logprob);
      std::vector<int32_t> ids;
      for (const TokenLogprob& alt : t.top) ids.push_back(alt.id);
      answers[i].alternatives.push_back(ids);
    }
    answers[i].timings = collectors[i]->last.timings;
    answers[i].finish = collectors[i]->last.finish_reason;
  }
  return answers;
}

// Small enough that the tiny model reasons a while before the tag in some cases.
constexpr float kLateThinkEndBias = 4.0f;

constexpr size_t kVariants = 4;  // greedy, sampled, JSON object, JSON schema

std::vector<GenerationRequest> Requests() {
  std::vector<GenerationRequest> requests;
  for (const std::string& name : CaseNames()) {
    GenerationRequest greedy = LoadCase(name);
    greedy.ignore_eos = true;
    greedy.max_tokens = 48;
    greedy.top_logprobs = 2;
    GenerationRequest sampled = greedy;
    sampled.sampling.temperature = 0.9f;
    sampled.sampling.top_p = 0.95f;
    sampled.sampling.repetition_penalty = 1.05f;
    sampled.sampling.seed = 11;
    GenerationRequest json = greedy;
    json.ignore_eos = false;
    json.grammar = JsonObjectGrammar();
    // Keys the schema fixes are drafted from the grammar.
    GenerationRequest fields = json;
    fields.grammar = CompileJsonSchema(nlohmann::ordered_json::parse(R"({
      "type": "object", "additionalProperties": false,
      "required": ["invoice_number", "customer_name", "total_amount"],
      "properties": {"invoice_number": {"type": "string", "maxLength": 6},
                     "customer_name": {"type": "string", "maxLength": 6},
                     "total_amount": {"type": "integer"}}})"));
    fields.max_tokens = 64;
    requests.push_back(std::move(greedy));
    requests.push_back(std::move(sampled));
    requests.push_back(std::move(json));
    requests.push_back(std::move(fields));
  }
  return requests;
}

bool DraftsRunHere() { return RowsPerWeightRead(WeightFormat::kQ8) >= 2; }
constexpr const char* kNoDrafts =
    "needs AVX2: the scalar q8 kernels read the weights once per row, so the engine drafts "
    "nothing";

TEST(EngineDrafts, AnswersAreTheSameTokenForTokenWithAndWithoutDrafts) {
  if (!DraftsRunHere()) GTEST_SKIP() << kNoDrafts;
  const std::vector<GenerationRequest> requests = Requests();
  const std::vector<Answer> plain = RunAll(0, requests);
  const std::vector<Answer> drafted = RunAll(EngineOptions().draft_tokens, requests);
  int64_t draft_tokens = 0, accepted = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE(CaseNames()[i / kVariants] + " variant " + std::to_string(i % kVariants));
    EXPECT_EQ(drafted[i].tokens, plain[i].tokens);
    EXPECT_EQ(drafted[i].logprobs, plain[i].logprobs);
    EXPECT_EQ(drafted[i].alternatives, plain[i].alternatives);
    EXPECT_EQ(drafted[i].finish, plain[i].finish);
    EXPECT_EQ(plain[i].timings.draft_tokens, 0);
    EXPECT_LE(drafted[i].timings.draft_tokens_accepted, drafted[i].timings.draft_tokens);
    draft_tokens += drafted[i].timings.draft_tokens;
    accepted += drafted[i].timings.draft_tokens_accepted;
  }
  // The tiny model's answers repeat themselves, so drafts are made and some are kept:
  // both paths of the verification ran.
  EXPECT_GT(accepted, 0);
  EXPECT_GT(draft_tokens, accepted);
  std::printf("drafted %lld, accepted %lld\n", static_cast<long long>(draft_tokens),
              static_cast<long long>(accepted));
}

// W8A8's kernels keep rows independent too (one integer sum and one scaling per output),
// so drafted rows verify to the same answers: greedy and under a schema.
TEST(EngineDrafts, W8A8AnswersAreTheSameTokenForTokenWithAndWithoutDrafts) {
  if (RowsPerWeightRead(WeightFormat::kW8A8) < 2) GTEST_SKIP() << kNoDrafts;
  std::vector<GenerationRequest> requests;
  const std::vector<GenerationRequest> all = Requests();
  for (size_t i = 0; i < all.size(); i += kVariants) {
    requests.push_back(all[i]);      // greedy
    requests.push_back(all[i + 3]);  // JSON schema
  }
  const std::vector<Answer> plain = RunAll(0, requests, EngineOptions(), WeightFormat::kW8A8);
  const std::vector<Answer> drafted =
      RunAll(EngineOptions().draft_tokens, requests, EngineOptions(), WeightFormat::kW8A8);
  int64_t accepted = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE(CaseNames()[i / 2] + (i % 2 ? " schema" : " greedy"));
    EXPECT_EQ(drafted[i].tokens, plain[i].tokens);
    EXPECT_EQ(drafted[i].logprobs, plain[i].logprobs);
    EXPECT_EQ(drafted[i].finish, plain[i].finish);
    accepted += drafted[i].timings.draft_tokens_accepted;
  }
  EXPECT_GT(accepted, 0);
}

TEST(EngineDrafts, AStopStringInsideAKeptDraftEndsTheAnswerWhereItWouldHave) {
  if (!DraftsRunHere()) GTEST_SKIP() << kNoDrafts;
  GenerationRequest r = LoadCase("01_text_only");
  r.ignore_eos = true;
  r.max_tokens = 48;
  r.top_logprobs = 0;  // so that updates carry token ids
  const std::vector<Answer> free = RunAll(0, {r});
  auto engine = MakeEngine(0);
  Collector text;
  engine->Submit(r, text.Sink());
  text.Wait();
  // A stop string from the middle of the answer, where it repeats itself.
  ASSERT_GT(text.text.size(), 40u);
  r.stop = {text.text.substr(text.text.size() / 2, 6)};
  const std::vector<Answer> plain = RunAll(0, {r});
  const std::vector<Answer> drafted = RunAll(EngineOptions().draft_tokens, {r});
  EXPECT_EQ(plain[0].finish, FinishReason::kStop);
  EXPECT_LT(plain[0].tokens.size(), free[0].tokens.size());
  EXPECT_EQ(drafted[0].tokens, plain[0].tokens);
  EXPECT_EQ(drafted[0].finish, plain[0].finish);
  EXPECT_GT(drafted[0].timings.draft_tokens_accepted, 0);
}

TEST(EngineDrafts, EveryChoiceOfARequestIsTheSameWithDrafts) {
  if (!DraftsRunHere()) GTEST_SKIP() << kNoDrafts;
  auto answers = [](int draft_tokens) {
    auto engine = MakeEngine(draft_tokens);
    GenerationRequest r = LoadCase("02_one_image_jpeg");
    r.n = 3;
    r.max_tokens = 64;
    r.ignore_eos = true;
    r.top_logprobs = 0;
    r.sampling.temperature = 0.3f;
    r.sampling.seed = 5;
    ChoicesCollector c(3);
    engine->Submit(std::move(r), c.Sink());
    c.Wait();
    int64_t kept = 0;
    for (const GenerationUpdate& last : c.last) kept += last.timings.draft_tokens_accepted;
    return std::make_pair(c.tokens, kept);
  };
  const auto [plain, none] = answers(0);
  const auto [drafted, kept] = answers(EngineOptions().draft_tokens);
  EXPECT_EQ(drafted, plain);
  EXPECT_NE(plain[0], plain[1]);
  EXPECT_EQ(none, 0);
  EXPECT_GT(kept, 0);
}

TEST(EngineDrafts, ATightKvCacheThatPreemptsGivesTheSameAnswers) {
  if (!DraftsRunHere()) GTEST_SKIP() << kNoDrafts;
  EngineOptions options;
  // 24 pages of 16 tokens: any one case fits, three at once do not (see engine_test.cc).
  options.kv_page_tokens = 16;
  options.kv_cache_bytes = 24 * 32 * 1024;
  std::vector<GenerationRequest> requests;
  for (const std::string& name : CaseNames()) {
    GenerationRequest r = LoadCase(name);
    r.ignore_eos = true;
    r.max_tokens = 40;
    r.top_logprobs = 0;
    requests.push_back(std::move(r));
  }
  const std::vector<Answer> plain = RunAll(0, requests, options);
  const std::vector<Answer> drafted = RunAll(EngineOptions().draft_tokens, requests, options);
  int64_t kept = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE(CaseNames()[i]);
    EXPECT_EQ(drafted[i].tokens, plain[i].tokens);
    EXPECT_EQ(drafted[i].finish, FinishReason::kLength);
    kept += drafted[i].timings.draft_tokens_accepted;
  }
  EXPECT_GT(kept, 0);
}

// A Thinking model under a schema: its reasoning is free text, drafted only from the
// prompt, and the schema's keys are drafted once "</think>" has come; the answers are
// those of decoding one token per step. The tiny model never writes the tag itself, so a
// bias brings it: at once, or after some reasoning.
TEST(EngineDrafts, AThinkingModelsSchemaAnswersAreTheSameWithDrafts) {
  if (!DraftsRunHere()) GTEST_SKIP() << kNoDrafts;
  const std::string thinking = ThinkingModelFolder(kModelDir);
  const int32_t think_end = QwenTokenizerForTest().TokenToId(kReasoningEnd);
  std::vector<GenerationRequest> requests;
  for (const float bias : {100.0f, kLateThinkEndBias}) {
    for (const GenerationRequest& r : Requests()) {
      if (r.grammar == nullptr || r.grammar == JsonObjectGrammar()) continue;
      requests.push_back(r);
      requests.back().logit_bias = {{think_end, bias}};
    }
  }
  const std::vector<Answer> plain =
      RunAll(0, requests, EngineOptions(), WeightFormat::kQ8, thinking);
  const std::vector<Answer> drafted =
      RunAll(EngineOptions().draft_tokens, requests, EngineOptions(), WeightFormat::kQ8, thinking);
  int64_t kept = 0;
  int reasoned_then_answered = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(drafted[i].tokens, plain[i].tokens);
    EXPECT_EQ(drafted[i].finish, plain[i].finish);
    const auto end = std::find(plain[i].tokens.begin(), plain[i].tokens.end(), think_end);
    if (end != plain[i].tokens.begin() && end != plain[i].tokens.end() &&
        plain[i].finish == FinishReason::kStop) {
      ++reasoned_then_answered;
    }
    kept += drafted[i].timings.draft_tokens_accepted;
  }
  EXPECT_GT(reasoned_then_answered, 0);
  EXPECT_GT(kept, 0);
}

}  // namespace
}  // namespace qvl
