#include "engine/token_bans.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/field_error.h"
#include "engine/request_ranges.h"
#include "grammar/grammar_test_util.h"

namespace qvl {
namespace {

using grammar_test::kVocabRows;
using grammar_test::QwenTokenizer;

TokenBans Bans(std::vector<std::string> words) {
  GenerationRequest request;
  request.bad_words = std::move(words);
  return PrepareTokenBans(request, QwenTokenizer(), kVocabRows);
}

std::string FieldOf(const GenerationRequest& request) {
  try {
    PrepareTokenBans(request, QwenTokenizer(), kVocabRows);
  } catch (const FieldError& e) {
    return e.field() + ": " + e.what();
  }
  return "";
}

// As vLLM's SamplingParams tokenizes them: the word without its leading whitespace, and
// after a space where that starts with another token and is as long (a word inside a
// sentence, "Ġsky" beside "sky"); a space that changes the count adds nothing.
TEST(TokenBansTest, BadWordsAreTokenizedAsVllmDoes) {
  const Tokenizer& t = QwenTokenizer();
  EXPECT_EQ(Bans({"  sky"}).bad_words,
            (std::vector<std::vector<int32_t>>{t.Encode("sky"), t.Encode(" sky")}));
  const std::vector<std::vector<int32_t>> blue_sky = Bans({"blue sky"}).bad_words;
  ASSERT_FALSE(blue_sky.empty());
  EXPECT_EQ(blue_sky.front(), t.Encode("blue sky"));
  for (const std::vector<int32_t>& ids : blue_sky) {
    EXPECT_EQ(ids.size(), t.Encode("blue sky").size());
  }
  EXPECT_TRUE(Bans({}).bad_words.empty());
  EXPECT_TRUE(Bans({}).allowed.empty());
}

TEST(TokenBansTest, AllowedTokensBecomeAMaskOverTheLogitsRows) {
  GenerationRequest request;
  request.allowed_token_ids = {3, 151935, 3};
  const TokenBans bans = PrepareTokenBans(request, QwenTokenizer(), kVocabRows);
  ASSERT_EQ(bans.allowed.size(), static_cast<size_t>((kVocabRows + 31) / 32));
  EXPECT_EQ(bans.allowed[0], 1u << 3);
  EXPECT_EQ(bans.allowed.back(), 1u << (151935 % 32));
}

TEST(TokenBansTest, RefusesWhatItCannotHonourNamingTheField) {
  GenerationRequest request;
  request.allowed_token_ids = {1, 151936};
  EXPECT_EQ(FieldOf(request),
            "allowed_token_ids[1]: allowed_token_ids[1]: token id 151936 is not in the "
            "vocabulary (0 to 151935)");
  request.allowed_token_ids = {1};
  request.grammar = JsonObjectGrammar();
  EXPECT_EQ(FieldOf(request),
            "allowed_token_ids: allowed_token_ids: cannot be combined with response_format, "
            "guided decoding or a forced tool call");

  GenerationRequest words;
  words.bad_words = {"sky", " \t"};
  EXPECT_EQ(FieldOf(words), "bad_words[1]: bad_words[1]: must hold a word, not only whitespace");
  words.bad_words.assign(request_ranges::kMaxBadWordSequences / 2 + 1, "sky");
  EXPECT_EQ(FieldOf(words),
            "bad_words: bad_words: at most 128 token sequences of 1024 tokens in all are "
            "supported (each word counts once as it is and once after a space)");
}

}  // namespace
}  // namespace qvl
