#include "engine/output_stream.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "text/reasoning_split.h"
#include "text/test_tokenizer.h"

namespace qvl {
namespace {

struct Streamed {
  std::string text;  // every update's text and the final flush
  FinishReason finish = FinishReason::kNone;
  int64_t generated = 0;
  int64_t reasoning = 0;
  std::optional<int32_t> stop_token;
};

// Feeds `pieces` token by token (each piece encoded on its own, "</think>" as its one
// token) until the stream finishes, as the engine does.
Streamed Stream(const OutputLimits& limits, const std::vector<std::string>& pieces) {
  const Tokenizer& tokenizer = QwenTokenizerForTest();
  std::vector<int32_t> tokens;
  for (const std::string& piece : pieces) {
    if (piece == kReasoningEnd) {
      tokens.push_back(tokenizer.TokenToId(kReasoningEnd));
      continue;
    }
    for (const int32_t id : tokenizer.Encode(piece)) tokens.push_back(id);
  }
  OutputStream stream(tokenizer, limits);
  Streamed out;
  for (const int32_t token : tokens) {
    GenerationUpdate update;
    out.finish = stream.Accept(token, nullptr, 0, &update);
    out.text += update.text;
    if (out.finish != FinishReason::kNone) break;
  }
  out.text += stream.Flush();
  out.generated = stream.generated();
  out.reasoning = stream.reasoning();
  out.stop_token = stream.matched_stop_token();
  return out;
}

OutputLimits Limits(std::vector<std::string> stop, bool thinking) {
  OutputLimits limits;
  limits.max_tokens = 100;
  limits.stop = std::move(stop);
  if (thinking) limits.reasoning_end = QwenTokenizerForTest().TokenToId(kReasoningEnd);
  return limits;
}

const std::vector<std::string> kAnswer = {"Rayleigh.\n\nShort waves", "</think>",
                                          "\n\nBlue.\n\nMore", "```"};

// The user's "\n\n" is meant for the answer: the reasoning's paragraphs and the newlines
// that lead the reply (the template's separator) pass, the reply's first one stops it.
TEST(OutputStreamTest, AThinkingModelsStopStringsMatchTheReplyOnly) {
  const Streamed s = Stream(Limits({"\n\n"}, true), kAnswer);
  EXPECT_EQ(s.text, "Rayleigh.\n\nShort waves</think>\n\nBlue.");
  EXPECT_EQ(s.finish, FinishReason::kStop);

  const Streamed fence = Stream(Limits({"```", "waves"}, true), kAnswer);
  EXPECT_EQ(fence.text, "Rayleigh.\n\nShort waves</think>\n\nBlue.\n\nMore");
  EXPECT_EQ(fence.finish, FinishReason::kStop);
}

// Cut off while it reasons, a stop string in the reasoning changes nothing.
TEST(OutputStreamTest, AStopStringInTheReasoningDoesNotEndIt) {
  OutputLimits limits = Limits({"waves"}, true);
  const Streamed s = Stream(limits, {"Rayleigh.\n\nShort waves scatter"});
  EXPECT_EQ(s.text, "Rayleigh.\n\nShort waves scatter");
  EXPECT_EQ(s.finish, FinishReason::kNone);
  EXPECT_EQ(s.reasoning, s.generated);
}

// Only the first tag ends the reasoning: a later one is reply text, which stops match.
TEST(OutputStreamTest, ALaterTagIsReplyText) {
  const Streamed s = Stream(Limits({"</think>"}, true), {"a", "</think>", "b", "</think>", "c"});
  EXPECT_EQ(s.text, "a</think>b");
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(s.reasoning, 2);
}

// Without a reasoning tag (an Instruct model, a raw prompt) stops match all of the text.
TEST(OutputStreamTest, WithoutReasoningStopStringsMatchEverything) {
  const Streamed s = Stream(Limits({"\n\n"}, false), kAnswer);
  EXPECT_EQ(s.text, "Rayleigh.");
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(s.reasoning, 0);

  const Streamed lead = Stream(Limits({"\n"}, false), {"\n\nx"});
  EXPECT_EQ(lead.text, "");
}

// The newlines that lead the reply are no part of its content, so no stop matches them.
TEST(OutputStreamTest, TheNewlinesThatLeadTheReplyAreNotMatched) {
  const Streamed s = Stream(Limits({"\n\n\n"}, true), {"a", "</think>", "\n\n\n"});
  EXPECT_EQ(s.text, "a</think>\n\n\n");
  EXPECT_EQ(s.finish, FinishReason::kNone);
}

// A stop token id ends the answer without its text, ignore_eos or not; an
// end-of-sequence id ends it unless ignore_eos.
TEST(OutputStreamTest, StopTokenIdsEndTheAnswerWithoutTheirText) {
  const Tokenizer& tokenizer = QwenTokenizerForTest();
  OutputLimits limits = Limits({}, false);
  limits.stop_token_ids = tokenizer.Encode(" is");
  limits.eos_ids = {tokenizer.TokenToId("<|im_end|>")};
  limits.ignore_eos = true;
  EXPECT_EQ(AnswerEndTokens(limits), limits.stop_token_ids);
  const Streamed s = Stream(limits, {"blue", " sky", " is", " blue"});
  EXPECT_EQ(s.text, "blue sky");
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(s.generated, 3);
  EXPECT_EQ(s.stop_token, limits.stop_token_ids[0]);

  limits.ignore_eos = false;
  EXPECT_EQ(AnswerEndTokens(limits).size(), 2u);
}

// vLLM's stop_reason: the stop token id that ended the answer, none when an
// end-of-sequence id did (also one listed in stop_token_ids, unless ignore_eos) or when
// max_tokens did.
TEST(OutputStreamTest, NamesTheStopTokenIdThatEndedTheAnswer) {
  const Tokenizer& tokenizer = QwenTokenizerForTest();
  const int32_t im_end = tokenizer.TokenToId("<|im_end|>");
  OutputLimits limits = Limits({}, false);
  limits.eos_ids = {im_end};
  limits.stop_token_ids = {im_end};
  const std::vector<std::string> answer = {"blue", "<|im_end|>", " sky"};
  Streamed s = Stream(limits, answer);
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(s.stop_token, std::nullopt);

  limits.ignore_eos = true;
  s = Stream(limits, answer);
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(s.stop_token, im_end);

  limits.max_tokens = 1;
  s = Stream(limits, answer);
  EXPECT_EQ(s.finish, FinishReason::kLength);
  EXPECT_EQ(s.stop_token, std::nullopt);
}

// As vLLM's v1 engine does, stop strings are looked for in the text after the first
// min_tokens tokens only: one within those stays, a later one ends the answer.
TEST(OutputStreamTest, StopStringsAreLookedForPastMinTokens) {
  OutputLimits limits = Limits({"blue"}, false);
  limits.min_tokens = 3;
  const Streamed s = Stream(limits, {"blue", " sky", " is", " blue", " again"});
  EXPECT_EQ(s.text, "blue sky is ");
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(s.generated, 4);
}

// vLLM's include_stop_str_in_output: the stop string ends the text, nothing is held back
// while one might be coming, and a stop token id's text (a special token has none, as an
// end-of-sequence token's) is the answer's last, with its logprobs.
TEST(OutputStreamTest, IncludedStopsEndTheText) {
  const Tokenizer& tokenizer = QwenTokenizerForTest();
  OutputLimits limits = Limits({" is b"}, false);
  limits.include_stop_str = true;
  Streamed s = Stream(limits, {"blue", " sky", " is", " blue", " again"});
  EXPECT_EQ(s.text, "blue sky is b");
  EXPECT_EQ(s.finish, FinishReason::kStop);
  EXPECT_EQ(s.generated, 4);

  OutputStream stream(tokenizer, limits);
  GenerationUpdate update;
  stream.Accept(tokenizer.Encode(" sky")[0], nullptr, 0, &update);
  stream.Accept(tokenizer.Encode(" is")[0], nullptr, 0, &update);
  EXPECT_EQ(update.text, " sky is");  // " is" may begin the stop, and is shown

  limits = Limits({}, false);
  limits.include_stop_str = true;
  limits.stop_token_ids = tokenizer.Encode(" is");
  limits.eos_ids = {tokenizer.TokenToId("<|im_end|>")};
  s = Stream(limits, {"blue", " sky", " is", " blue"});
  EXPECT_EQ(s.text, "blue sky is");
  EXPECT_EQ(s.stop_token, limits.stop_token_ids[0]);
  s = Stream(limits, {"blue", "<|im_end|>", " is"});
  EXPECT_EQ(s.text, "blue");
  EXPECT_EQ(s.stop_token, std::nullopt);

  limits.top_logprobs = 0;
  std::vector<float> logits(tokenizer.vocab_size(), 0.0f);
  OutputStream with_logprobs(tokenizer, limits);
  update = {};
  EXPECT_EQ(with_logprobs.Accept(limits.stop_token_ids[0], logits.data(),
                                 static_cast<int64_t>(logits.size()), &update),
            FinishReason::kStop);
  ASSERT_EQ(update.tokens.size(), 1u);
  EXPECT_EQ(update.tokens[0].chosen.id, limits.stop_token_ids[0]);
  EXPECT_EQ(update.text, " is");
}

}  // namespace
}  // namespace qvl
