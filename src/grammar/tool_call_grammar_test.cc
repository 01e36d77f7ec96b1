#include <gtest/gtest.h>

#include <random>

#include "base/field_error.h"
#include "grammar/grammar.h"
#include "grammar/grammar_test_util.h"

namespace qvl {
namespace {

using grammar_test::Accepts;

std::vector<ToolSchema> WeatherTools() {
  return {{"get_weather", nlohmann::json::parse(R"({"type": "object", "properties": {
             "city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
             "required": ["city"], "additionalProperties": false})"),
           ""},
          {"now", nlohmann::json(), ""}};
}

std::string Call(const std::string& name, const std::string& arguments) {
  return "<tool_call>\n{\"name\": \"" + name + "\", \"arguments\": " + arguments +
         "}\n</tool_call>";
}

TEST(ToolCallGrammarTest, OneCallOfAnyTool) {
  const std::vector<ToolSchema> tools = WeatherTools();
  const std::shared_ptr<const Grammar> grammar = CompileToolCallGrammar(tools, false);
  EXPECT_TRUE(Accepts(grammar, Call("get_weather", R"({"city": "Paris"})")));
  EXPECT_TRUE(Accepts(grammar, Call("get_weather", R"({"city": "Paris", "unit": "c"})")));
  EXPECT_TRUE(Accepts(grammar, Call("now", "{}")));
  EXPECT_TRUE(Accepts(grammar, Call("now", R"({"anything": [1]})")));
  EXPECT_FALSE(Accepts(grammar, Call("get_weather", R"({"unit": "c"})")));
  EXPECT_FALSE(Accepts(grammar, Call("get_weather", R"({"city": "Paris", "unit": "k"})")));
  EXPECT_FALSE(Accepts(grammar, Call("other", "{}")));
  EXPECT_FALSE(Accepts(grammar, Call("now", "[]")));
  EXPECT_FALSE(Accepts(grammar, Call("now", "{}") + "\n" + Call("now", "{}")));
  EXPECT_FALSE(Accepts(grammar, "{\"name\": \"now\", \"arguments\": {}}"));
  GrammarMatcher matcher(grammar, grammar_test::QwenTokens());
  ASSERT_TRUE(matcher.AcceptBytes(Call("now", "{}")));
  EXPECT_TRUE(matcher.IsTerminated());
}

TEST(ToolCallGrammarTest, ParallelCallsAreSeparatedByNewlines) {
  const std::vector<ToolSchema> tools = WeatherTools();
  const std::shared_ptr<const Grammar> grammar = CompileToolCallGrammar(tools, true);
  const std::string a = Call("get_weather", R"({"city": "Oslo"})"), b = Call("now", "{}");
  EXPECT_TRUE(Accepts(grammar, a));
  EXPECT_TRUE(Accepts(grammar, a + "\n" + b));
  EXPECT_TRUE(Accepts(grammar, a + "\n" + b + "\n" + a));
  EXPECT_FALSE(Accepts(grammar, a + b));
  EXPECT_FALSE(Accepts(grammar, a + "\n"));
  EXPECT_FALSE(Accepts(grammar, ""));
}

TEST(ToolCallGrammarTest, UsesTheToolCallTokensAndClosesInTime) {
  const std::vector<ToolSchema> tools = WeatherTools();
  const std::shared_ptr<const Grammar> grammar = CompileToolCallGrammar(tools, true);
  std::mt19937 rng(5);
  for (int run = 0; run < 10; ++run) {
    const grammar_test::Generation g = grammar_test::RandomGeneration(grammar, 60, &rng);
    ASSERT_TRUE(g.complete) << g.text;
    EXPECT_TRUE(Accepts(grammar, g.text));
  }
  // The first token may be the single <tool_call> token.
  GrammarMatcher matcher(grammar, grammar_test::QwenTokens());
  std::vector<uint32_t> mask(grammar_test::QwenTokens()->mask_words());
  matcher.FillNextTokenMask(mask, 100);
  EXPECT_TRUE(grammar_test::MaskHas(mask, grammar_test::QwenTokenizer().TokenToId("<tool_call>")));
}

TEST(ToolCallGrammarTest, ErrorsNameTheToolsParameters) {
  std::vector<ToolSchema> tools = WeatherTools();
  tools.push_back(
      {"bad", nlohmann::json::parse(R"({"type": "object", "properties": {"x": {"type": "text"}}})"),
       ""});
  try {
    CompileToolCallGrammar(tools, false);
    FAIL() << "compiled";
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "tools[2].function.parameters.properties.x.type");
  }
  tools.back().parameters_path = "tool_choice.function.parameters";
  try {
    CompileToolCallGrammar(tools, false);
    FAIL() << "compiled";
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "tool_choice.function.parameters.properties.x.type");
  }
  tools.back() = {"list", nlohmann::json::parse(R"({"type": "array"})"), ""};
  try {
    CompileToolCallGrammar(tools, false);
    FAIL() << "compiled";
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "tools[2].function.parameters");
  }
}

}  // namespace
}  // namespace qvl
