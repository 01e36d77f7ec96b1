#include "engine/text_limit.h"

#include <gtest/gtest.h>

namespace qvl {
namespace {

TEST(TextLimit, QwensLongestTokenIs128Bytes) {
  const Tokenizer tokenizer =
      Tokenizer::FromFile(std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/model/tokenizer.json");
  EXPECT_EQ(LongestTokenBytes(tokenizer), kQwen3LongestTokenBytes);
}

TEST(TextLimit, TheBoundCoversTheLongestTokenAfterNfc) {
  EXPECT_EQ(MaxPromptTextBytes(4096, 128), 4096 * 128 * 3);
}

TEST(TextLimit, CountsTextPartsAndToolCalls) {
  std::vector<ChatMessage> messages(2);
  messages[0].parts = {{ChatPart::Kind::kText, "hello"}, {ChatPart::Kind::kImage, ""}};
  messages[1].tool_calls = {{"zoom", "{\"x\":1}"}};
  EXPECT_EQ(MessageTextBytes(messages), 5 + 4 + 7);
}

}  // namespace
}  // namespace qvl
