// vLLM's stop_token_ids and min_tokens on the tiny fixture model: an id the greedy answer
// produces ends it there, min_tokens carries an answer past the token it ended on, and
// both are checked before any work. Also what the engine logs when a step fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/captured_log.h"
#include "base/field_error.h"
#include "engine/engine_test_cases.h"

namespace qvl {
namespace {

// 01_text_only's greedy answer: "Occurred" "一页" " Malaysian" "Occurred" ...
constexpr int kThirdToken = 65431;  // " Malaysian"
constexpr int32_t kImEnd = 151645;  // an end-of-sequence id of generation_config.json

GenerationRequest TextOnly() {
  GenerationRequest r = LoadCase("01_text_only");
  r.top_logprobs = 0;  // so that updates carry the token ids
  return r;
}

Collector& Answer(Engine& engine, GenerationRequest request, Collector& c) {
  engine.Submit(std::move(request), c.Sink());
  c.Wait();
  return c;
}

TEST(EngineAnswerEnds, AStopTokenIdEndsTheAnswerWithoutItsText) {
  auto engine = MakeEngine();
  const std::vector<int32_t> golden = GoldenTokens("01_text_only");
  ASSERT_EQ(golden[2], kThirdToken);
  for (const bool ignore_eos : {false, true}) {
    GenerationRequest r = TextOnly();
    r.stop_token_ids = {7, kThirdToken};
    r.ignore_eos = ignore_eos;  // ends the answer at an end-of-sequence token only
    Collector c;
    Answer(*engine, std::move(r), c);
    EXPECT_EQ(c.last.finish_reason, FinishReason::kStop);
    EXPECT_EQ(c.last.usage.completion_tokens, 3);
    EXPECT_EQ(c.text, "Occurred一页");
    // Its logprob is left out, as an end-of-sequence token's is.
    EXPECT_EQ(c.tokens, std::vector<int32_t>(golden.begin(), golden.begin() + 2));
  }
}

TEST(EngineAnswerEnds, MinTokensRunsAnAnswerPastTheTokenItEndedOn) {
  auto engine = MakeEngine();
  const std::vector<int32_t> golden = GoldenTokens("01_text_only");
  GenerationRequest r = TextOnly();
  r.stop_token_ids = {kThirdToken};
  r.min_tokens = 6;
  Collector c;
  Answer(*engine, std::move(r), c);
  ASSERT_GE(c.tokens.size(), 6u) << c.text;
  EXPECT_EQ(std::vector<int32_t>(c.tokens.begin(), c.tokens.begin() + 2),
            std::vector<int32_t>(golden.begin(), golden.begin() + 2));
  EXPECT_EQ(std::count(c.tokens.begin(), c.tokens.begin() + 6, kThirdToken), 0);

  // An end-of-sequence token favoured by logit_bias ends the answer at its first token;
  // with min_tokens it comes right after them.
  GenerationRequest eager = TextOnly();
  eager.logit_bias = {{kImEnd, 100}};
  Collector first;
  Answer(*engine, eager, first);
  EXPECT_EQ(first.last.usage.completion_tokens, 1);
  EXPECT_EQ(first.text, "");
  eager.min_tokens = 4;
  Collector held;
  Answer(*engine, std::move(eager), held);
  EXPECT_EQ(held.last.finish_reason, FinishReason::kStop);
  EXPECT_EQ(held.last.usage.completion_tokens, 5);
  EXPECT_EQ(held.tokens.size(), 4u);
  EXPECT_FALSE(held.text.empty());

  // Without max_tokens the answer may run to min_tokens past the server's default.
  EngineOptions options;
  options.default_max_tokens = 3;
  auto short_answers = MakeEngine(options);
  GenerationRequest longer = TextOnly();
  longer.max_tokens = 0;
  longer.ignore_eos = true;
  longer.min_tokens = 5;
  Collector five;
  Answer(*short_answers, std::move(longer), five);
  EXPECT_EQ(five.last.finish_reason, FinishReason::kLength);
  EXPECT_EQ(five.last.usage.completion_tokens, 5);
}

TEST(EngineAnswerEnds, BadStopTokenIdsAndMinTokensAreRefusedByField) {
  EngineOptions options;
  options.context_tokens = 64;
  auto engine = MakeEngine(options);
  struct Case {
    std::function<void(GenerationRequest&)> set;
    std::string field;
    std::string error;
  };
  const Case cases[] = {
      {[](GenerationRequest& r) {
         r.stop_token_ids = {kImEnd, 151936};
       },
       "stop_token_ids[1]",
       "stop_token_ids[1]: token id 151936 is not in the vocabulary (0 to 151935)"},
      {[](GenerationRequest& r) { r.stop_token_ids = {-1}; }, "stop_token_ids[0]",
       "stop_token_ids[0]: token id -1 is not in the vocabulary (0 to 151935)"},
      {[](GenerationRequest& r) { r.stop_token_ids.assign(65, 5); }, "stop_token_ids",
       "stop_token_ids: at most 64 stop token ids are supported, got 65"},
      {[](GenerationRequest& r) { r.min_tokens = 17; }, "min_tokens",
       "min_tokens: must be at most max_tokens (16), got 17"},
      {[](GenerationRequest& r) { r.min_tokens = -1; }, "min_tokens",
       "min_tokens: must be between 0 and 1048576, got -1"},
      {[](GenerationRequest& r) {
         r.max_tokens = 0;
         r.min_tokens = 40;
       },
       "min_tokens", "min_tokens: asks for 40 tokens, but the context leaves 38 after the prompt"},
  };
  for (const Case& c : cases) {
    GenerationRequest r = TextOnly();
    c.set(r);
    Collector never;
    try {
      engine->Submit(std::move(r), never.Sink());
      ADD_FAILURE() << c.error;
    } catch (const FieldError& e) {
      EXPECT_EQ(e.field(), c.field);
      EXPECT_EQ(std::string(e.what()), c.error);
    }
  }
  EXPECT_EQ(engine->Stats().requests_finished, 0);
}

// A step that fails fails the requests in it; its log line names them, as the engine's
// other lines about a request do, so an operator can find whose answer it cut.
TEST(EngineAnswerEnds, AFailedStepNamesItsRequests) {
  auto engine = MakeEngine();
  CapturedLog log;
  GenerationRequest r = TextOnly();
  r.request_id = "req-step-1";
  std::mutex mu;
  std::condition_variable cv;
  bool thrown = false, finished = false;
  GenerationUpdate last;
  // The sink runs inside the engine's step: a first update that throws fails the step.
  engine->Submit(std::move(r), [&](GenerationUpdate&& u) {
    std::lock_guard<std::mutex> lock(mu);
    if (!thrown) {
      thrown = true;
      throw std::runtime_error("the sink broke");
    }
    if (u.finished) {
      last = std::move(u);
      finished = true;
      cv.notify_all();
    }
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return finished; });
  EXPECT_EQ(last.finish_reason, FinishReason::kError);
  EXPECT_EQ(last.error, "the sink broke");
  const std::string line = log.WaitFor({"engine step failed"});
  EXPECT_NE(line.find("request_ids=req-step-1"), std::string::npos) << line;
  EXPECT_NE(line.find("error=\"the sink broke\""), std::string::npos) << line;
}

}  // namespace
}  // namespace qvl
