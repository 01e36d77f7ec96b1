#include "server/tool_call_parser.h"

#include <gtest/gtest.h>

namespace qvl {
namespace {

ToolCallParser::Output ParseInPieces(std::string_view text, size_t piece) {
  ToolCallParser parser;
  ToolCallParser::Output out;
  for (size_t i = 0; i < text.size(); i += piece) parser.Feed(text.substr(i, piece), &out);
  parser.Finish(&out);
  return out;
}

TEST(ToolCallParserTest, SplitsContentAndCallsWhateverThePieceSize) {
  const std::string text =
      "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris\", \"unit\": \"c\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", "
      "\"arguments\": {}}\n</tool_call>";
  for (size_t piece : {1, 2, 3, 7, 1000}) {
    const ToolCallParser::Output out = ParseInPieces(text, piece);
    EXPECT_EQ(out.content, "Let me check.\n\n") << piece;
    ASSERT_EQ(out.calls.size(), 2u) << piece;
    EXPECT_EQ(out.calls[0].name, "get_weather");
    EXPECT_EQ(out.calls[0].arguments, R"({"city":"Paris","unit":"c"})");
    EXPECT_EQ(out.calls[1].name, "get_time");
    EXPECT_EQ(out.calls[1].arguments, "{}");
    EXPECT_EQ(out.calls[0].id.rfind("call_", 0), 0u);
    EXPECT_EQ(out.calls[0].id.size(), 29u);
    EXPECT_NE(out.calls[0].id, out.calls[1].id);
  }
}

TEST(ToolCallParserTest, CallOffsetsSayWhereEachCallWasWritten) {
  const std::string text =
      "A<tool_call>{\"name\": \"f\"}</tool_call>BC<tool_call>{\"name\": \"g\"}</tool_call>"
      "<tool_call>{\"name\": \"h\"}</tool_call>D";
  for (size_t piece : {1, 3, 1000}) {
    const ToolCallParser::Output out = ParseInPieces(text, piece);
    EXPECT_EQ(out.content, "ABCD") << piece;
    EXPECT_EQ(out.call_offsets, (std::vector<size_t>{1, 3, 3})) << piece;
  }
}

TEST(ToolCallParserTest, HoldsBackOnlyWhatMayStartACall) {
  ToolCallParser parser;
  ToolCallParser::Output out;
  parser.Feed("a < b and <tool", &out);
  EXPECT_EQ(out.content, "a < b and ");
  parser.Feed("box> too", &out);
  EXPECT_EQ(out.content, "a < b and <toolbox> too");
  parser.Finish(&out);
  EXPECT_EQ(out.content, "a < b and <toolbox> too");
  EXPECT_EQ(parser.calls(), 0);
}

TEST(ToolCallParserTest, AMalformedCallStaysContent) {
  for (const std::string body : {"{\"name\": \"f\", \"arguments\": {", "[1, 2]",
                                 "{\"arguments\": {}}", "{\"name\": \"\"}", "not json"}) {
    const std::string text = "x<tool_call>" + body + "</tool_call>y";
    const ToolCallParser::Output out = ParseInPieces(text, 4);
    EXPECT_EQ(out.content, text) << body;
    EXPECT_TRUE(out.calls.empty()) << body;
  }
}

TEST(ToolCallParserTest, ACompleteCallWithoutItsClosingTagCounts) {
  ToolCallParser::Output out =
      ParseInPieces("<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1]}}\n", 5);
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].arguments, R"({"a":[1]})");
  EXPECT_EQ(out.content, "");

  out = ParseInPieces("<tool_call>\n{\"name\": \"f\", \"argu", 5);
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content, "<tool_call>\n{\"name\": \"f\", \"argu");
}

TEST(ToolCallParserTest, ArgumentsGivenAsAStringAreKept) {
  const ToolCallParser::Output out = ParseInPieces(
      "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>", 3);
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].arguments, R"({"a": 1})");
}

// The model writes whatever the prompt asks for: a call nested deeper than any real one is
// not a call (writing its arguments out would overflow the stack), and arguments given
// as such a string are no object to hand on.
TEST(ToolCallParserTest, ACallNestedDeeperThanAnyRealOneStaysContent) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const std::string text =
      "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": " + deep + "}}</tool_call>";
  ToolCallParser::Output out = ParseInPieces(text, 4096);
  EXPECT_EQ(out.content, text);
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(ArgumentsObject("{\"a\": " + deep + "}"), nlohmann::json::object());

  const std::string nested = std::string(100, '[') + std::string(100, ']');
  out = ParseInPieces(
      "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": " + nested + "}}</tool_call>", 7);
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].arguments, "{\"a\":" + nested + "}");
  EXPECT_EQ(ArgumentsObject(out.calls[0].arguments).size(), 1u);
}

}  // namespace
}  // namespace qvl
