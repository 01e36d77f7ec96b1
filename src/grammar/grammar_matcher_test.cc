#include "grammar/grammar_matcher.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "base/error.h"

#include "grammar/grammar.h"
#include "grammar/grammar_test_util.h"

namespace qvl {
namespace {

using grammar_test::AllowedTokens;
using grammar_test::kEndOfText;
using grammar_test::kImEnd;
using grammar_test::kVocabRows;
using grammar_test::MaskHas;
using grammar_test::QwenTokens;

std::shared_ptr<const Grammar> ReceiptGrammar() {
  return CompileJsonSchema(nlohmann::ordered_json::parse(R"({
    "type": "object",
    "properties": {
      "store": {"type": "string", "maxLength": 40},
      "date": {"type": "string", "format": "date"},
      "items": {"type": "array", "items": {"type": "object", "properties": {
        "name": {"type": "string"}, "qty": {"type": "integer", "minimum": 1, "maximum": 99},
        "price": {"type": "number", "minimum": 0}}, "required": ["name", "price"],
        "additionalProperties": false}},
      "total": {"type": "number"},
      "paid": {"enum": ["cash", "card"]}
    },
    "required": ["store", "items", "total"],
    "additionalProperties": false})"));
}

// The plain twin of FillNextTokenMask: every token tried on a copy of the matcher.
std::vector<uint32_t> ReferenceMask(const GrammarMatcher& matcher, int64_t tokens_left) {
  std::vector<uint32_t> mask(QwenTokens()->mask_words(), 0);
  std::vector<uint32_t> nearest(mask.size(), 0);
  int64_t nearest_distance = INT64_MAX;
  bool any = false;
  for (int32_t id = 0; id < kVocabRows; ++id) {
    GrammarMatcher copy = matcher;
    if (!copy.Accept(id)) continue;
    if (id == kImEnd || id == kEndOfText) {
      mask[id >> 5] |= uint32_t{1} << (id & 31);
      continue;
    }
    const int64_t distance = copy.MinBytesToComplete();
    if (distance <= tokens_left - 1) {
      mask[id >> 5] |= uint32_t{1} << (id & 31);
      any = true;
    }
    if (distance < nearest_distance) {
      nearest_distance = distance;
      std::fill(nearest.begin(), nearest.end(), 0);
    }
    if (distance == nearest_distance) nearest[id >> 5] |= uint32_t{1} << (id & 31);
  }
  if (!any && !matcher.IsComplete()) {
    for (size_t w = 0; w < mask.size(); ++w) mask[w] |= nearest[w];
  }
  return mask;
}

TEST(GrammarMatcherTest, MaskEqualsTryingEveryTokenOnRandomStates) {
  std::mt19937 rng(7);
  std::vector<uint32_t> mask(QwenTokens()->mask_words());
  int states = 0;
  const ToolSchema tools[] = {
      {"lookup", nlohmann::json::parse(R"({"type": "object", "properties": {"q": {"type": "string",
        "pattern": "^[a-z ]+$"}, "n": {"type": "integer", "minimum": 1}}, "required": ["q"]})"),
       ""}};
  const std::shared_ptr<const Grammar> grammars[] = {ReceiptGrammar(), JsonObjectGrammar(),
                                                     CompileToolCallGrammar(tools, true)};
  for (const std::shared_ptr<const Grammar>& grammar : grammars) {
    for (int walk = 0; walk < 3; ++walk) {
      GrammarMatcher matcher(grammar, QwenTokens());
      for (int step = 0; step < 40 && !matcher.IsTerminated(); ++step) {
        const int64_t tokens_left = step % 3 == 0 ? 1000 : 2 + static_cast<int64_t>(rng() % 30);
        if (step % 7 == 0) {
          matcher.FillNextTokenMask(mask, tokens_left);
          ASSERT_EQ(mask, ReferenceMask(matcher, tokens_left)) << "step " << step;
          ++states;
        }
        matcher.FillNextTokenMask(mask, 1000);
        std::vector<int32_t> allowed = AllowedTokens(mask);
        std::erase_if(allowed, [](int32_t id) { return id == kImEnd || id == kEndOfText; });
        ASSERT_FALSE(allowed.empty());
        ASSERT_TRUE(matcher.Accept(allowed[rng() % allowed.size()]));
      }
    }
  }
  EXPECT_GE(states, 18);
}

TEST(GrammarMatcherTest, EosOnlyWhenCompleteAndNothingAfterIt) {
  GrammarMatcher matcher(CompileJsonSchema(nlohmann::json::parse(R"({"type": "integer"})")),
                         QwenTokens());
  std::vector<uint32_t> mask(QwenTokens()->mask_words());
  matcher.FillNextTokenMask(mask, 100);
  EXPECT_FALSE(MaskHas(mask, kImEnd));
  EXPECT_FALSE(matcher.Accept(kImEnd));
  ASSERT_TRUE(matcher.AcceptBytes("12"));
  EXPECT_TRUE(matcher.IsComplete());
  EXPECT_FALSE(matcher.IsTerminated());  // more digits may follow
  matcher.FillNextTokenMask(mask, 100);
  EXPECT_TRUE(MaskHas(mask, kImEnd));
  EXPECT_TRUE(MaskHas(mask, kEndOfText));
  EXPECT_TRUE(MaskHas(mask, QwenTokens()->eos_ids()[0]));
  GrammarMatcher fork = matcher;
  EXPECT_TRUE(matcher.Accept(kImEnd));
  EXPECT_FALSE(matcher.Accept(kImEnd));
  matcher.FillNextTokenMask(mask, 100);
  EXPECT_TRUE(AllowedTokens(mask).empty());
  // The fork did not see the eos.
  EXPECT_TRUE(fork.AcceptBytes("3"));
}

TEST(GrammarMatcherTest, ForcedBytesAreWhatEveryContinuationStartsWith) {
  GrammarMatcher matcher(ReceiptGrammar(), QwenTokens());
  // The schema's first key is required, so once its quote is open the key is fixed.
  ASSERT_TRUE(matcher.AcceptBytes("{\""));
  const std::string key = matcher.ForcedBytes(64);
  EXPECT_EQ(key.substr(0, 6), "store\"") << key;
  EXPECT_EQ(matcher.ForcedBytes(3), "sto");
  // Every forced byte is accepted, and the state where it ends has a choice.
  GrammarMatcher after = matcher;
  ASSERT_TRUE(after.AcceptBytes(key));
  EXPECT_EQ(after.ForcedBytes(64), "");
  // Two enum values share their first letters.
  ASSERT_TRUE(matcher.AcceptBytes("store\": \"s\", \"items\": [], \"total\": 1, \"paid\": \"c"));
  EXPECT_EQ(matcher.ForcedBytes(64), "a");
  ASSERT_TRUE(matcher.AcceptBytes("ash"));
  EXPECT_EQ(matcher.ForcedBytes(64), "\"");  // whitespace may come before the brace
  ASSERT_TRUE(matcher.AcceptBytes("\"}"));
  // Complete: the answer may end here, so nothing is forced.
  EXPECT_EQ(matcher.ForcedBytes(64), "");
}

TEST(GrammarMatcherTest, TerminatedAllowsOnlyEos) {
  GrammarMatcher matcher(JsonObjectGrammar(), QwenTokens());
  ASSERT_TRUE(matcher.AcceptBytes("{\"a\": 1}"));
  EXPECT_TRUE(matcher.IsTerminated());
  std::vector<uint32_t> mask(QwenTokens()->mask_words());
  matcher.FillNextTokenMask(mask, 100);
  EXPECT_EQ(AllowedTokens(mask), (std::vector<int32_t>{kEndOfText, kImEnd}));
}

TEST(GrammarMatcherTest, NeverAllowsSpecialTokensOrRowsPastTheVocabulary) {
  const Tokenizer& tokenizer = grammar_test::QwenTokenizer();
  // A grammar that any text satisfies: special tokens would spell text too.
  GrammarMatcher matcher(CompileJsonSchema(nlohmann::json::parse(R"({"type": "string"})")),
                         QwenTokens());
  ASSERT_TRUE(matcher.AcceptBytes("\""));
  std::vector<uint32_t> mask(QwenTokens()->mask_words());
  matcher.FillNextTokenMask(mask, 1000);
  int regular = 0;
  for (int32_t id = 0; id < kVocabRows; ++id) {
    if (id >= tokenizer.vocab_size() || tokenizer.IsSpecial(id)) {
      EXPECT_FALSE(MaskHas(mask, id)) << id;
      EXPECT_FALSE(GrammarMatcher(matcher).Accept(id)) << id;
    } else {
      regular += MaskHas(mask, id);
    }
  }
  EXPECT_GT(regular, 140000);  // the inside of a string takes almost every token
  EXPECT_TRUE(MaskHas(mask, tokenizer.TokenToId("<think>")));  // non-special added tokens are text
}

TEST(GrammarMatcherTest, RefusesAMaskShorterThanTheVocabulary) {
  GrammarMatcher matcher(JsonObjectGrammar(), QwenTokens());
  std::vector<uint32_t> mask(QwenTokens()->mask_words() - 1);
  EXPECT_THROW(matcher.FillNextTokenMask(mask, 10), Error);
}

TEST(GrammarMatcherTest, RefusedTokenLeavesTheStateUnchanged) {
  GrammarMatcher matcher(JsonObjectGrammar(), QwenTokens());
  const Tokenizer& tokenizer = grammar_test::QwenTokenizer();
  EXPECT_FALSE(matcher.Accept(tokenizer.TokenToId("[")));
  EXPECT_FALSE(matcher.AcceptBytes("{\"a\"x"));
  EXPECT_TRUE(matcher.Accept(tokenizer.TokenToId("{")));
  EXPECT_FALSE(matcher.Accept(-1));
  EXPECT_FALSE(matcher.Accept(static_cast<int32_t>(kVocabRows)));
  EXPECT_TRUE(matcher.AcceptBytes("}"));
  EXPECT_TRUE(matcher.IsComplete());
}

TEST(GrammarMatcherTest, TightBudgetClosesTheAnswerExactlyInTime) {
  // With exactly the shortest completion left, the only way is the shortest way.
  const std::shared_ptr<const Grammar> grammar = ReceiptGrammar();
  GrammarMatcher start(grammar, QwenTokens());
  const int64_t shortest = start.MinBytesToComplete();
  EXPECT_EQ(shortest, std::string(R"({"store":"","items":[],"total":0})").size());
  std::mt19937 rng(3);
  for (int run = 0; run < 5; ++run) {
    const grammar_test::Generation g = grammar_test::RandomGeneration(grammar, shortest, &rng, 0.0);
    EXPECT_TRUE(g.complete) << g.text;
    EXPECT_LE(g.tokens, shortest);
  }
}

TEST(GrammarMatcherTest, TooSmallBudgetStillMovesTowardsTheEnd) {
  GrammarMatcher matcher(ReceiptGrammar(), QwenTokens());
  std::vector<uint32_t> mask(QwenTokens()->mask_words());
  matcher.FillNextTokenMask(mask, 1);
  const std::vector<int32_t> allowed = AllowedTokens(mask);
  ASSERT_FALSE(allowed.empty());
  for (int32_t id : allowed) {
    GrammarMatcher copy = matcher;
    ASSERT_TRUE(copy.Accept(id));
    EXPECT_EQ(copy.MinBytesToComplete(),
              matcher.MinBytesToComplete() - static_cast<int64_t>(QwenTokens()->Bytes(id).size()));
  }
}

TEST(GrammarMatcherTest, ApplyTokenMaskSetsDisallowedLogitsToMinusInfinity) {
  const int64_t rows = 70;
  std::vector<uint32_t> mask((rows + 31) / 32, 0);
  for (int id : {0, 31, 32, 69}) mask[id >> 5] |= uint32_t{1} << (id & 31);
  mask[1] |= 0;
  std::vector<float> logits(rows + 1, 1.5f);
  ApplyTokenMask(mask, logits.data(), rows);
  for (int64_t i = 0; i < rows; ++i) {
    const bool allowed = i == 0 || i == 31 || i == 32 || i == 69;
    if (allowed) {
      EXPECT_EQ(logits[i], 1.5f) << i;
    } else {
      EXPECT_TRUE(std::isinf(logits[i]) && logits[i] < 0) << i;
    }
  }
  EXPECT_EQ(logits[rows], 1.5f);  // past the row: untouched
  std::vector<float> past_mask(40, 1.0f);
  ApplyTokenMask(std::vector<uint32_t>(1, ~uint32_t{0}), past_mask.data(), 40);
  EXPECT_EQ(past_mask[31], 1.0f);
  EXPECT_TRUE(std::isinf(past_mask[32]));
  std::vector<uint32_t> full(1, ~uint32_t{0});
  std::vector<float> all(32, 2.0f);
  ApplyTokenMask(full, all.data(), 32);
  EXPECT_EQ(all, std::vector<float>(32, 2.0f));
}

TEST(TokenTableTest, HoldsEveryRegularTokenOnce) {
  const TokenTable& table = *QwenTokens();
  EXPECT_EQ(table.vocab_rows(), kVocabRows);
  EXPECT_EQ(table.mask_words(), static_cast<size_t>((kVocabRows + 31) / 32));
  std::vector<int> seen(kVocabRows, 0);
  for (int32_t id : table.token_ids()) ++seen[id];
  const Tokenizer& tokenizer = grammar_test::QwenTokenizer();
  for (int32_t id = 0; id < kVocabRows; ++id) {
    const bool regular = id < tokenizer.vocab_size() && !tokenizer.IsSpecial(id);
    EXPECT_EQ(seen[id], regular ? 1 : 0) << id;
  }
  // Each node's tokens spell the path to it.
  std::vector<char> path;
  for (size_t i = 0; i < table.nodes().size(); ++i) {
    const TokenTable::Node& node = table.nodes()[i];
    path.resize(node.depth - 1);
    path.push_back(static_cast<char>(node.byte));
    for (int32_t t = node.tokens_begin; t < node.tokens_begin + node.token_count; ++t) {
      ASSERT_EQ(table.Bytes(table.token_ids()[t]), std::string_view(path.data(), path.size()));
    }
  }
}

TEST(TokenTableTest, RefusesAnEosOutsideTheRows) {
  const int32_t eos[] = {static_cast<int32_t>(kVocabRows)};
  EXPECT_THROW(BuildTokenTable(grammar_test::QwenTokenizer(), kVocabRows, eos), qvl::Error);
}

// Repetitions of what may be empty nest as deep as their counts, and each step used to
// expand them again per stack top: such patterns overflowed the stack (a server crash by
// one response_format) and took minutes per token. Up to kMaxLeadingParts they are
// enforced (past it schema_compiler_test sees them refused).
TEST(GrammarMatcherTest, RepetitionsOfEmptyPartsNeitherOverflowNorCrawl) {
  const auto nested = CompileJsonSchema(
      nlohmann::ordered_json::parse(R"({"type": "string", "pattern": "^((a?){0,15}){0,15}$"})"));
  EXPECT_TRUE(grammar_test::Accepts(nested, "\"aaaa\""));
  EXPECT_FALSE(grammar_test::Accepts(nested, "\"ab\""));
  const auto wide = CompileJsonSchema(
      nlohmann::ordered_json::parse(R"({"type": "string", "pattern": "^(a?){0,300}b$"})"));
  EXPECT_TRUE(grammar_test::Accepts(wide, "\"aaab\""));
  EXPECT_FALSE(grammar_test::Accepts(wide, "\"aaa\""));
}

}  // namespace
}  // namespace qvl
