// The real Qwen3 tokenizer against the reference ids in tests/data.
#include "text/tokenizer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "text/test_tokenizer.h"

namespace qvl {
namespace {

const std::string kData = QVL_TEST_DATA;

const Tokenizer& Qwen() { return QwenTokenizerForTest(); }

nlohmann::json ReadJson(const std::string& path) {
  return nlohmann::json::parse(ReadFileToString(path));
}

TEST(TokenizerTest, MatchesEveryReferenceCase) {
  const nlohmann::json cases = ReadJson(kData + "/tokenizer/cases.json")["cases"];
  ASSERT_EQ(cases.size(), 62u);
  for (const nlohmann::json& c : cases) {
    const std::string text = c["text"].get<std::string>();
    const std::vector<int32_t> ids = Qwen().Encode(text);
    EXPECT_EQ(ids, c["ids"].get<std::vector<int32_t>>()) << "text: " << text;
    if (c["decoded_roundtrip"].get<bool>()) {
      EXPECT_EQ(Qwen().Decode(ids, false), text);
    }
  }
}

TEST(TokenizerTest, DecodesGreedyTextOfEveryFixtureCase) {
  size_t cases = 0;
  for (const auto& dir : std::filesystem::directory_iterator(kData + "/tiny-qwen3vl/cases")) {
    const nlohmann::json meta = ReadJson(dir.path().string() + "/meta.json");
    std::vector<int32_t> tokens = meta["greedy_tokens"].get<std::vector<int32_t>>();
    if (!meta["greedy_first_eos_index"].is_null()) {
      tokens.resize(meta["greedy_first_eos_index"].get<size_t>());
    }
    EXPECT_EQ(Qwen().Decode(tokens, true), meta["greedy_text"].get<std::string>()) << dir.path();
    ++cases;
  }
  EXPECT_EQ(cases, 8u);
}

TEST(TokenizerTest, Vocabulary) {
  const Tokenizer& t = Qwen();
  EXPECT_EQ(t.vocab_size(), 151669);
  EXPECT_EQ(t.TokenToId("<|im_start|>"), 151644);
  EXPECT_EQ(t.TokenToId("<|image_pad|>"), 151655);
  EXPECT_EQ(t.TokenToId("<think>"), 151667);
  EXPECT_EQ(t.TokenToId("\xC4\xA0the"), 279);  // "Ġthe"
  EXPECT_EQ(t.TokenToId("no such token"), -1);
  EXPECT_EQ(t.IdToToken(279), "\xC4\xA0the");
  EXPECT_EQ(t.IdToToken(151645), "<|im_end|>");
  EXPECT_EQ(t.IdToToken(151669), "");
  EXPECT_EQ(t.IdToToken(-1), "");
  EXPECT_TRUE(t.IsSpecial(151645));
  EXPECT_FALSE(t.IsSpecial(151667));  // <think> is added but not special
  EXPECT_FALSE(t.IsSpecial(279));
  EXPECT_FALSE(t.IsSpecial(200000));
  EXPECT_EQ(t.TokenBytes(279), " the");
}

TEST(TokenizerTest, DecodeSkipsUnknownIdsAndOptionallySpecialTokens) {
  const Tokenizer& t = Qwen();
  const std::vector<int32_t> ids = {151644, 872, 198, 9707, 151645, 151900, -5};
  EXPECT_EQ(t.Decode(ids, false), "<|im_start|>user\nHello<|im_end|>");
  EXPECT_EQ(t.Decode(ids, true), "user\nHello");
  // Non-special added tokens stay even when skipping.
  EXPECT_EQ(t.Decode(t.Encode("<think>x</think>"), true), "<think>x</think>");
}

TEST(TokenizerTest, DecodeReplacesIllFormedUtf8) {
  const Tokenizer& t = Qwen();
  // "中" is E4 B8 AD; the token for the lone byte E4 is an incomplete character.
  const int32_t lone_e4 = t.TokenToId("\xC3\xA4");  // byte 0xE4 in the byte alphabet
  ASSERT_GE(lone_e4, 0);
  EXPECT_EQ(t.Decode(std::vector<int32_t>{lone_e4}, false), "\xEF\xBF\xBD");
  EXPECT_EQ(t.Decode(std::vector<int32_t>{lone_e4, t.TokenToId("a")}, false),
            "\xEF\xBF\xBD"
            "a");
}

TEST(TokenizerTest, EncodeReplacesIllFormedInputFirst) {
  const Tokenizer& t = Qwen();
  EXPECT_EQ(t.Encode("a\xFF"
                     "b"),
            t.Encode("a\xEF\xBF\xBD"
                     "b"));
  EXPECT_EQ(t.Decode(t.Encode("x\xE4\xB8"), false), "x\xEF\xBF\xBD");
}

TEST(TokenizerTest, EveryByteRoundTrips) {
  const Tokenizer& t = Qwen();
  std::string all_ascii;
  for (int c = 1; c < 128; ++c) all_ascii.push_back(static_cast<char>(c));
  EXPECT_EQ(t.Decode(t.Encode(all_ascii), false), all_ascii);
}

TEST(TokenizerTest, LongInputsStayLinear) {
  const Tokenizer& t = Qwen();
  // One 200 kB piece (a run of letters) and a long whitespace run: the heap-based
  // merge loop and the scanner must handle both without quadratic blow-up.
  const std::string letters(200000, 'a');
  const std::vector<int32_t> ids = t.Encode(letters);
  EXPECT_EQ(t.Decode(ids, false), letters);
  const std::string spaces = std::string(100000, ' ') + "x";
  EXPECT_EQ(t.Decode(t.Encode(spaces), false), spaces);
}

TEST(TokenizerTest, MissingFileIsReported) {
  try {
    Tokenizer::FromFile("/nonexistent/tokenizer.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/tokenizer.json"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace qvl
