#include "text/stream_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text/test_tokenizer.h"

namespace qvl {
namespace {

const Tokenizer& Qwen() { return QwenTokenizerForTest(); }

// Feeds `ids` one by one and flushes; `chunks` gets what each Feed returned.
std::string Stream(const std::vector<int32_t>& ids, bool skip_special,
                   std::vector<std::string>* chunks = nullptr) {
  StreamDecoder decoder(Qwen(), skip_special);
  std::string text;
  for (const int32_t id : ids) {
    const std::string chunk = decoder.Feed(id);
    if (chunks != nullptr) chunks->push_back(chunk);
    text += chunk;
  }
  text += decoder.Flush();
  return text;
}

// The token that stands for a single byte (every byte has one).
int32_t ByteToken(uint8_t byte) {
  for (int32_t id = 0; id < 256; ++id) {
    const std::string_view bytes = Qwen().TokenBytes(id);
    if (bytes.size() == 1 && static_cast<uint8_t>(bytes[0]) == byte) return id;
  }
  return -1;
}

TEST(StreamDecoderTest, EqualsDecodeOnMultiByteText) {
  for (const std::string_view text :
       {"你好，世界！今天天气怎么样？",
        "emoji: 😀🎉👍🏽 👨‍👩‍👧‍👦 🇩🇪", "日本語のテキストです。",
        "Mixed 中文 and English 混合 text 123", "Ünïcödé ẞ ß ǅ ﬁ ① ² ½", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𓀀 𠀀"}) {
    const std::vector<int32_t> ids = Qwen().Encode(text);
    EXPECT_EQ(Stream(ids, false), Qwen().Decode(ids, false)) << text;
    EXPECT_EQ(Stream(ids, false), text);
  }
}

TEST(StreamDecoderTest, HoldsBackAnIncompleteCharacter) {
  // 😀 is F0 9F 98 80: fed as four byte tokens it appears only with the last one.
  std::vector<std::string> chunks;
  const std::vector<int32_t> ids = {ByteToken(0xF0), ByteToken(0x9F), ByteToken(0x98),
                                    ByteToken(0x80), Qwen().TokenToId("!")};
  EXPECT_EQ(Stream(ids, false, &chunks), "😀!");
  EXPECT_EQ(chunks, (std::vector<std::string>{"", "", "", "😀", "!"}));
}

TEST(StreamDecoderTest, IllFormedBytesBecomeReplacementCharacters) {
  // A lead byte cut short by ASCII, a stray continuation byte, and a truncated tail.
  const std::vector<int32_t> ids = {ByteToken(0xE4), ByteToken(0xB8), Qwen().TokenToId("a"),
                                    ByteToken(0x80), ByteToken(0xF0), ByteToken(0x9F)};
  std::vector<std::string> chunks;
  const std::string streamed = Stream(ids, false, &chunks);
  EXPECT_EQ(streamed, Qwen().Decode(ids, false));
  EXPECT_EQ(streamed,
            "\xEF\xBF\xBD"
            "a"
            "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(chunks, (std::vector<std::string>{"", "",
                                              "\xEF\xBF\xBD"
                                              "a",
                                              "\xEF\xBF\xBD", "", ""}));
}

TEST(StreamDecoderTest, SkipsSpecialTokensLikeDecode) {
  const std::vector<int32_t> ids =
      Qwen().Encode("<|im_start|>assistant\n这是答案。<think>x</think><|im_end|>");
  EXPECT_EQ(Stream(ids, true), Qwen().Decode(ids, true));
  EXPECT_EQ(Stream(ids, true), "assistant\n这是答案。<think>x</think>");
  EXPECT_EQ(Stream(ids, false), Qwen().Decode(ids, false));
  // A special token between the bytes of one character does not break it when skipped.
  const std::vector<int32_t> split = {ByteToken(0xE4), 151645, ByteToken(0xB8), ByteToken(0xAD)};
  EXPECT_EQ(Stream(split, true), "中");
  EXPECT_EQ(Stream(split, false), Qwen().Decode(split, false));
}

TEST(StreamDecoderTest, FlushStartsANewStream) {
  StreamDecoder decoder(Qwen(), false);
  EXPECT_EQ(decoder.Feed(ByteToken(0xE4)), "");
  EXPECT_EQ(decoder.Flush(), "\xEF\xBF\xBD");
  EXPECT_EQ(decoder.Flush(), "");
  EXPECT_EQ(decoder.Feed(Qwen().TokenToId("a")), "a");
}

}  // namespace
}  // namespace qvl
