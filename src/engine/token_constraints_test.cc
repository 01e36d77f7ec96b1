#include "engine/token_constraints.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "grammar/grammar_test_util.h"
#include "text/reasoning_split.h"

namespace qvl {
namespace {

using grammar_test::kImEnd;
using grammar_test::kVocabRows;
using grammar_test::QwenTokenizer;
using grammar_test::QwenTokens;

int32_t Id(const std::string& piece) {
  const std::vector<int32_t> ids = QwenTokenizer().Encode(piece);
  EXPECT_EQ(ids.size(), 1u) << piece;
  return ids.at(0);
}

// Which of `pieces` (one token each) the constraints leave possible next.
std::vector<std::string> Allowed(TokenConstraints& c, const std::vector<std::string>& pieces,
                                 int64_t tokens_left = 100) {
  std::vector<float> logits(kVocabRows, 0.0f);
  c.Apply(logits.data(), tokens_left);
  std::vector<std::string> out;
  for (const std::string& piece : pieces) {
    if (std::isfinite(logits[static_cast<size_t>(Id(piece))])) out.push_back(piece);
  }
  return out;
}

void AcceptText(TokenConstraints& c, const std::string& text) {
  for (int32_t id : QwenTokenizer().Encode(text)) c.Accept(id);
}

const std::vector<std::string> kPieces = {"\n", "\n\n", "{", "Hello", " sky"};

class ThinkingConstraintsTest : public ::testing::Test {
 protected:
  const int32_t think_end_ = QwenTokenizer().TokenToId(std::string(kReasoningEnd));
  TokenConstraints constraints_{{}, JsonObjectGrammar(), QwenTokens(), kVocabRows, think_end_};
};

TEST_F(ThinkingConstraintsTest, TheReasoningIsFreeText) {
  EXPECT_EQ(Allowed(constraints_, kPieces), kPieces);
  AcceptText(constraints_, "Hello, the sky\n\nis blue because");
  EXPECT_EQ(Allowed(constraints_, kPieces), kPieces);
  EXPECT_EQ(constraints_.ForcedBytes(16), "");
  EXPECT_FALSE(constraints_.Terminated());
}

TEST_F(ThinkingConstraintsTest, TheGrammarBindsWhatFollowsTheTagAfterTheTemplatesNewlines) {
  AcceptText(constraints_, "Hello");
  constraints_.Accept(think_end_);
  EXPECT_EQ(Allowed(constraints_, kPieces), (std::vector<std::string>{"\n", "\n\n", "{"}));
  constraints_.Accept(Id("\n"));
  EXPECT_EQ(Allowed(constraints_, kPieces), (std::vector<std::string>{"\n", "{"}));
  constraints_.Accept(Id("\n"));
  // kReplySeparator's two newlines are all that may lead the reply.
  EXPECT_EQ(Allowed(constraints_, kPieces), (std::vector<std::string>{"{"}));
  AcceptText(constraints_, "{\"a\": 1}");
  std::vector<float> logits(kVocabRows, 0.0f);
  constraints_.Apply(logits.data(), 100);
  EXPECT_TRUE(std::isfinite(logits[kImEnd]));
  EXPECT_FALSE(std::isfinite(logits[static_cast<size_t>(Id("Hello"))]));
}

TEST_F(ThinkingConstraintsTest, TheReplyMayStartRightAfterTheTag) {
  constraints_.Accept(think_end_);
  constraints_.Accept(Id("{"));
  EXPECT_EQ(Allowed(constraints_, kPieces), (std::vector<std::string>{"\n"}));
  EXPECT_EQ(constraints_.ForcedBytes(16), "");
}

TEST_F(ThinkingConstraintsTest, NoNewlinesLeadTheReplyWhenTheGrammarNeedsEveryToken) {
  constraints_.Accept(think_end_);
  // "{}" needs both tokens left.
  EXPECT_EQ(Allowed(constraints_, kPieces, 2), (std::vector<std::string>{"{"}));
}

TEST(TokenConstraintsTest, WithoutATagTheGrammarBindsTheFirstToken) {
  TokenConstraints constraints({}, JsonObjectGrammar(), QwenTokens(), kVocabRows);
  EXPECT_EQ(Allowed(constraints, kPieces), (std::vector<std::string>{"{"}));
}

TEST(TokenConstraintsTest, LogitBiasAppliesInsideAndAfterTheReasoning) {
  const int32_t think_end = QwenTokenizer().TokenToId(std::string(kReasoningEnd));
  const LogitBias bias[] = {{think_end, 100.0f}};
  TokenConstraints constraints(bias, JsonObjectGrammar(), QwenTokens(), kVocabRows, think_end);
  std::vector<float> logits(kVocabRows, 0.0f);
  constraints.Apply(logits.data(), 100);
  EXPECT_EQ(logits[static_cast<size_t>(think_end)], 100.0f);
  constraints.Accept(think_end);
  logits.assign(kVocabRows, 0.0f);
  constraints.Apply(logits.data(), 100);
  // The grammar's mask outranks the bias: the tag is not JSON.
  EXPECT_FALSE(std::isfinite(logits[static_cast<size_t>(think_end)]));
}

TEST(TokenConstraintsTest, MinTokensHoldsTheEndTokensBack) {
  const EndHold hold{{Id(" sky"), kImEnd}, 2};
  TokenConstraints constraints({}, nullptr, nullptr, kVocabRows, -1, hold);
  const std::vector<std::string> without_sky = {"\n", "\n\n", "{", "Hello"};
  EXPECT_EQ(Allowed(constraints, kPieces), without_sky);
  constraints.Accept(Id("Hello"));
  EXPECT_EQ(Allowed(constraints, kPieces), without_sky);
  constraints.Accept(Id("Hello"));
  EXPECT_EQ(Allowed(constraints, kPieces), kPieces);
}

// A sentence of the grammar that nothing may follow ends before min_tokens: its end
// tokens are all there is to sample.
TEST(TokenConstraintsTest, AGrammarThatCanOnlyEndEndsBeforeMinTokens) {
  TokenConstraints constraints({}, JsonObjectGrammar(), QwenTokens(), kVocabRows, -1,
                               {{kImEnd, grammar_test::kEndOfText}, 100});
  std::vector<float> logits(kVocabRows, 0.0f);
  constraints.Apply(logits.data(), 100);
  EXPECT_FALSE(std::isfinite(logits[kImEnd]));
  AcceptText(constraints, "{}");
  logits.assign(kVocabRows, 0.0f);
  constraints.Apply(logits.data(), 100);
  EXPECT_TRUE(std::isfinite(logits[kImEnd]));
}

// The reasoning budget: after that many tokens of reasoning "</think>" is the only token
// left; once it has come, the reply is free again, and the grammar binds it.
TEST(TokenConstraintsTest, AReasoningBudgetForcesTheTagAfterThatManyTokens) {
  const int32_t think_end = QwenTokenizer().TokenToId(std::string(kReasoningEnd));
  TokenConstraints constraints({}, nullptr, nullptr, kVocabRows, think_end, {}, 2);
  const std::vector<std::string> with_tag = {"Hello", " sky", std::string(kReasoningEnd)};
  EXPECT_EQ(Allowed(constraints, with_tag), with_tag);
  AcceptText(constraints, "Hello sky");
  EXPECT_EQ(Allowed(constraints, with_tag), std::vector<std::string>{std::string(kReasoningEnd)});
  constraints.Accept(think_end);
  EXPECT_EQ(Allowed(constraints, with_tag), with_tag);

  TokenConstraints json({}, JsonObjectGrammar(), QwenTokens(), kVocabRows, think_end, {}, 1);
  AcceptText(json, "Hello");
  EXPECT_EQ(Allowed(json, kPieces), std::vector<std::string>{});
  json.Accept(think_end);
  EXPECT_EQ(Allowed(json, kPieces), (std::vector<std::string>{"\n", "\n\n", "{"}));
}

// A budget of 0 ends the reasoning at once, even against a bias; the tag stays allowed
// where min_tokens holds it back as a stop token id.
TEST(TokenConstraintsTest, AReasoningBudgetOfZeroEndsTheReasoningFirst) {
  const int32_t think_end = QwenTokenizer().TokenToId(std::string(kReasoningEnd));
  const std::vector<LogitBias> bias = {{Id("Hello"), 100}, {think_end, -100}};
  TokenConstraints constraints(bias, nullptr, nullptr, kVocabRows, think_end, {{think_end}, 5}, 0);
  std::vector<float> logits(kVocabRows, 0.0f);
  constraints.Apply(logits.data(), 100);
  EXPECT_TRUE(std::isfinite(logits[static_cast<size_t>(think_end)]));
  EXPECT_EQ(std::count_if(logits.begin(), logits.end(), [](float l) { return std::isfinite(l); }),
            1);
}

// Without a tag (a model that does not reason) there is no reasoning to budget.
TEST(TokenConstraintsTest, WithoutATagTheBudgetIsIgnored) {
  TokenConstraints constraints({}, nullptr, nullptr, kVocabRows, -1, {}, 0);
  EXPECT_EQ(Allowed(constraints, kPieces), kPieces);
}

// vLLM's allowed_token_ids: every other token is out, before the bias; where min_tokens
// holds back the only allowed token, an end token, it stays.
TEST(TokenConstraintsTest, OnlyAllowedTokensAreLeft) {
  GenerationRequest request;
  request.allowed_token_ids = {Id("{"), Id(" sky")};
  const TokenBans bans = PrepareTokenBans(request, QwenTokenizer(), kVocabRows);
  const std::vector<LogitBias> bias = {{Id("Hello"), 100}};
  TokenConstraints constraints(bias, nullptr, nullptr, kVocabRows, -1, {}, -1, &bans);
  EXPECT_EQ(Allowed(constraints, kPieces), (std::vector<std::string>{"{", " sky"}));

  request.allowed_token_ids = {kImEnd};
  const TokenBans end_only = PrepareTokenBans(request, QwenTokenizer(), kVocabRows);
  TokenConstraints held({}, nullptr, nullptr, kVocabRows, -1, {{kImEnd}, 5}, -1, &end_only);
  std::vector<float> logits(kVocabRows, 0.0f);
  held.Apply(logits.data(), 100);
  EXPECT_TRUE(std::isfinite(logits[kImEnd]));
  EXPECT_EQ(std::count_if(logits.begin(), logits.end(), [](float l) { return std::isfinite(l); }),
            1);
}

// vLLM's bad_words: a one-token word is never sampled; a longer one's last token is banned
// only where the answer ends with the rest of it. A ban that would leave no token (here
// the only allowed one) is not made.
TEST(TokenConstraintsTest, BadWordsBanTheirLastTokenAfterTheRest) {
  TokenBans bans;
  bans.bad_words = {{Id("Hello")}, {Id("{"), Id(" sky")}};
  TokenConstraints constraints({}, nullptr, nullptr, kVocabRows, -1, {}, -1, &bans);
  const std::vector<std::string> without_hello = {"\n", "\n\n", "{", " sky"};
  EXPECT_EQ(Allowed(constraints, kPieces), without_hello);
  constraints.Accept(Id("{"));
  EXPECT_EQ(Allowed(constraints, kPieces), (std::vector<std::string>{"\n", "\n\n", "{"}));
  constraints.Accept(Id("\n"));
  EXPECT_EQ(Allowed(constraints, kPieces), without_hello);

  GenerationRequest request;
  request.allowed_token_ids = {Id("Hello")};
  TokenBans only_hello = PrepareTokenBans(request, QwenTokenizer(), kVocabRows);
  only_hello.bad_words = bans.bad_words;
  TokenConstraints last({}, nullptr, nullptr, kVocabRows, -1, {}, -1, &only_hello);
  EXPECT_EQ(Allowed(last, kPieces), (std::vector<std::string>{"Hello"}));
}

}  // namespace
}  // namespace qvl
