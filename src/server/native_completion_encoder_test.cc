#include "server/native_completion_encoder.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "server/encoder_updates_for_test.h"

namespace qvl {
namespace {

using ::qvl::testing::Events;
using ::qvl::testing::Final;
using ::qvl::testing::Progress;
using ::qvl::testing::Text;

NativeEncoderOptions Options(std::vector<std::string> prompts = {"Once upon"}) {
  NativeEncoderOptions options;
  options.model = "qwen3-vl";
  options.prompts = std::move(prompts);
  return options;
}

// Final(reason) after 2 tokens and 2 ms of decoding; `stop` the stop string that ended it.
GenerationUpdate End(FinishReason reason, const std::string& stop = "") {
  GenerationUpdate u = Final(reason);
  u.stop = stop;
  u.timings.decode_ms = 2;
  return u;
}

TEST(NativeCompletionEncoderTest, OneResultObject) {
  NativeCompletionEncoder encoder(Options());
  encoder.set_upload_ms(1.5);
  EXPECT_EQ(encoder.Start(), "");
  EXPECT_EQ(encoder.Encode(Text("Hel")), "");
  EXPECT_EQ(encoder.Encode(Text("lo\n")), "");
  const nlohmann::json r = nlohmann::json::parse(encoder.Encode(End(FinishReason::kLength)));
  EXPECT_TRUE(encoder.finished());
  EXPECT_EQ(r["index"], 0);
  EXPECT_EQ(r["content"], "Hello\n");
  EXPECT_EQ(r["tokens"], nlohmann::json::array());
  EXPECT_EQ(r["id_slot"], 0);
  EXPECT_EQ(r["stop"], true);
  EXPECT_EQ(r["model"], "qwen3-vl");
  EXPECT_EQ(r["tokens_predicted"], 2);
  EXPECT_EQ(r["tokens_evaluated"], 12);
  EXPECT_EQ(r["tokens_cached"], 8);
  EXPECT_EQ(r["prompt"], "Once upon");
  EXPECT_EQ(r["has_new_line"], true);
  EXPECT_EQ(r["truncated"], false);
  EXPECT_EQ(r["stop_type"], "limit");
  EXPECT_EQ(r["stopping_word"], "");
  EXPECT_FALSE(r.contains("completion_probabilities"));
  EXPECT_FALSE(r.contains("error"));
  // 12 prompt tokens, 8 of them cached: 4 read in 3 ms; 2 predicted in 2 ms.
  const nlohmann::json& t = r["timings"];
  EXPECT_EQ(t["cache_n"], 8);
  EXPECT_EQ(t["prompt_n"], 4);
  EXPECT_EQ(t["prompt_ms"], 3.0);
  EXPECT_EQ(t["prompt_per_token_ms"], 0.75);
  EXPECT_DOUBLE_EQ(t["prompt_per_second"].get<double>(), 4000.0 / 3);
  EXPECT_EQ(t["predicted_n"], 2);
  EXPECT_EQ(t["predicted_ms"], 2.0);
  EXPECT_EQ(t["predicted_per_token_ms"], 1.0);
  EXPECT_EQ(t["predicted_per_second"], 1000.0);
  EXPECT_EQ(t["upload_ms"], 1.5);  // qvl's own beside them
  EXPECT_EQ(encoder.summary().usage.prompt_tokens, 12);
  EXPECT_EQ(encoder.summary().finish_reason, FinishReason::kLength);
}

TEST(NativeCompletionEncoderTest, StopTypeSaysWhatEndedTheAnswer) {
  const auto result = [](GenerationUpdate end) {
    NativeCompletionEncoder encoder(Options());
    encoder.Encode(Text("Hi"));
    return nlohmann::json::parse(encoder.Encode(std::move(end)));
  };
  const nlohmann::json eos = result(End(FinishReason::kStop));
  EXPECT_EQ(eos["stop_type"], "eos");
  EXPECT_EQ(eos["stopping_word"], "");
  EXPECT_EQ(eos["has_new_line"], false);
  const nlohmann::json word = result(End(FinishReason::kStop, "END"));
  EXPECT_EQ(word["stop_type"], "word");
  EXPECT_EQ(word["stopping_word"], "END");
  EXPECT_EQ(result(End(FinishReason::kLength))["stop_type"], "limit");
  // Cut short: ended as by the limit, and says why.
  const nlohmann::json cut = result(End(FinishReason::kCancelled));
  EXPECT_EQ(cut["stop_type"], "limit");
  EXPECT_NE(cut["error"]["message"].get<std::string>().find("shut down"), std::string::npos);
}

TEST(NativeCompletionEncoderTest, TokensAndProbabilities) {
  NativeEncoderOptions options = Options();
  options.return_tokens = true;
  options.n_probs = 2;
  NativeCompletionEncoder encoder(std::move(options));
  encoder.Encode(Text("Hel"));
  encoder.Encode(Text("lo"));
  const nlohmann::json r = nlohmann::json::parse(encoder.Encode(End(FinishReason::kStop)));
  EXPECT_EQ(r["tokens"], nlohmann::json({42, 42}));
  ASSERT_EQ(r["completion_probabilities"].size(), 2u);
  const nlohmann::json& lo = r["completion_probabilities"][1];
  EXPECT_EQ(lo["id"], 42);
  EXPECT_EQ(lo["token"], "lo");
  EXPECT_EQ(lo["logprob"], -0.25);
  EXPECT_EQ(lo["bytes"], nlohmann::json({108, 111}));
  ASSERT_EQ(lo["top_logprobs"].size(), 2u);
  EXPECT_EQ(
      lo["top_logprobs"][0],
      (nlohmann::json{{"id", 42}, {"token", "lo"}, {"logprob", -0.25}, {"bytes", {108, 111}}}));
  // A token that ends inside a character: its bytes say what its text cannot.
  EXPECT_EQ(lo["top_logprobs"][1]["id"], 7);
  EXPECT_EQ(lo["top_logprobs"][1]["logprob"], -2.0);
  EXPECT_EQ(lo["top_logprobs"][1]["bytes"], nlohmann::json({228, 184}));
  EXPECT_EQ(r["completion_probabilities"][0]["token"], "Hel");
}

TEST(NativeCompletionEncoderTest, StreamedEventsThenTheFinalOneWithoutDone) {
  NativeEncoderOptions options = Options();
  options.stream = true;
  options.progress = true;
  options.n_probs = 1;
  options.return_tokens = true;
  NativeCompletionEncoder encoder(std::move(options));
  std::string sse = encoder.Encode(Progress(40, 1));
  sse += encoder.Encode(Text("Hel"));
  sse += encoder.Encode(Text("lo"));
  sse += encoder.Encode(End(FinishReason::kStop, "END"));
  EXPECT_TRUE(encoder.finished());
  EXPECT_EQ(sse.find("[DONE]"), std::string::npos);
  const std::vector<nlohmann::json> events = Events(sse);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["prompt_progress"]["processed"], 40);
  EXPECT_EQ(events[0]["content"], "");
  EXPECT_EQ(events[0]["stop"], false);
  EXPECT_EQ(events[1]["content"], "Hel");
  EXPECT_EQ(events[1]["tokens"], nlohmann::json({42}));
  EXPECT_EQ(events[1]["stop"], false);
  EXPECT_EQ(events[1]["index"], 0);
  ASSERT_EQ(events[1]["completion_probabilities"].size(), 1u);
  EXPECT_EQ(events[1]["completion_probabilities"][0]["id"], 42);
  EXPECT_EQ(events[2]["content"], "lo");
  const nlohmann::json& last = events[3];
  EXPECT_EQ(last["stop"], true);
  EXPECT_EQ(last["content"], "");
  EXPECT_EQ(last["tokens"], nlohmann::json::array());
  EXPECT_EQ(last["stop_type"], "word");
  EXPECT_EQ(last["stopping_word"], "END");
  EXPECT_EQ(last["tokens_predicted"], 2);
  EXPECT_EQ(last["timings"]["predicted_n"], 2);
  EXPECT_FALSE(last.contains("completion_probabilities"));
}

TEST(NativeCompletionEncoderTest, SeveralPromptsAnswerAnArray) {
  NativeCompletionEncoder encoder(Options({"A", "B"}));
  GenerationUpdate b = Text("b");
  b.choice = 1;
  EXPECT_EQ(encoder.Encode(std::move(b)), "");
  GenerationUpdate b_end = End(FinishReason::kStop);
  b_end.choice = 1;
  EXPECT_EQ(encoder.Encode(std::move(b_end)), "");
  EXPECT_FALSE(encoder.finished());
  encoder.Encode(Text("a"));
  const nlohmann::json r = nlohmann::json::parse(encoder.Encode(End(FinishReason::kLength)));
  ASSERT_TRUE(r.is_array());
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0]["index"], 0);
  EXPECT_EQ(r[0]["content"], "a");
  EXPECT_EQ(r[0]["prompt"], "A");
  EXPECT_EQ(r[0]["stop_type"], "limit");
  EXPECT_EQ(r[1]["index"], 1);
  EXPECT_EQ(r[1]["content"], "b");
  EXPECT_EQ(r[1]["prompt"], "B");
  EXPECT_EQ(r[1]["stop_type"], "eos");
  EXPECT_EQ(encoder.summary().usage.prompt_tokens, 24);
}

TEST(NativeCompletionEncoderTest, SeveralPromptsStreamedCarryTheirIndex) {
  NativeEncoderOptions options = Options({"A", "B"});
  options.stream = true;
  NativeCompletionEncoder encoder(std::move(options));
  GenerationUpdate b = Text("b");
  b.choice = 1;
  std::string sse = encoder.Encode(std::move(b));
  sse += encoder.Encode(Text("a"));
  sse += encoder.Encode(End(FinishReason::kLength));
  GenerationUpdate b_end = End(FinishReason::kStop);
  b_end.choice = 1;
  sse += encoder.Encode(std::move(b_end));
  EXPECT_TRUE(encoder.finished());
  const std::vector<nlohmann::json> events = Events(sse);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["index"], 1);
  EXPECT_EQ(events[0]["content"], "b");
  EXPECT_EQ(events[1]["index"], 0);
  EXPECT_EQ(events[2]["index"], 0);
  EXPECT_EQ(events[2]["stop"], true);
  EXPECT_EQ(events[2]["prompt"], "A");
  EXPECT_EQ(events[3]["index"], 1);
  EXPECT_EQ(events[3]["stop"], true);
  EXPECT_EQ(events[3]["stop_type"], "eos");
}

// Streamed, every event carries its token ids, as llama-server's do; n_predict 0 leaves
// the engine's one token out: no content, tokens_predicted 0, stop_type "limit".
TEST(NativeCompletionEncoderTest, StreamedIdsAndAPromptOnlyResult) {
  NativeEncoderOptions streamed = Options();
  streamed.stream = true;
  NativeCompletionEncoder encoder(std::move(streamed));
  const std::vector<nlohmann::json> events = Events(encoder.Encode(Text("Hel")));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["tokens"], nlohmann::json({42}));

  NativeEncoderOptions only = Options();
  only.prompt_only = true;
  NativeCompletionEncoder prompt(std::move(only));
  EXPECT_EQ(prompt.Encode(Text("Hel")), "");
  GenerationUpdate end = End(FinishReason::kStop);
  end.stop_token = 151645;
  const nlohmann::json r = nlohmann::json::parse(prompt.Encode(std::move(end)));
  EXPECT_EQ(r["content"], "");
  EXPECT_EQ(r["tokens_predicted"], 0);
  EXPECT_EQ(r["stop_type"], "limit");
  EXPECT_EQ(r["timings"]["predicted_n"], 0);
  EXPECT_EQ(prompt.summary().usage.completion_tokens, 0);
}

}  // namespace
}  // namespace qvl
