#include "server/output_controls.h"

#include <gtest/gtest.h>

#include "base/field_error.h"
#include "server/chat_request.h"

namespace qvl {
namespace {

nlohmann::json Body() {
  return {{"messages", {{{"role", "user"}, {"content", "What is the weather in Paris?"}}}}};
}

// Written by hand so that key order is the client's, not nlohmann's sorted one.
constexpr char kWeatherTool[] =
    R"({"type": "function", "function": {"name": "get_weather", "description": "Weather now",)"
    R"( "parameters": {"type": "object", "properties": {"city": {"type": "string"}},)"
    R"( "required": ["city"]}}})";

std::string WithTools(const std::string& extra) {
  return std::string(R"({"messages": [{"role": "user", "content": "hi"}], "tools": [)") +
         kWeatherTool + "]" + extra + "}";
}

ChatRequest Parse(const std::string& text) {
  ChatRequestPolicy policy;
  policy.pixels_per_image_token = 32 * 32;
  return ParseChatRequest(text, policy);
}

std::string ErrorOf(const std::string& text, const std::string& field) {
  try {
    Parse(text);
  } catch (const FieldError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    return e.what();
  }
  return "no error";
}

TEST(OutputControlsTest, ToolsReachTheTemplateInTheClientsOrderAndFormat) {
  const ChatRequest r = Parse(WithTools(""));
  ASSERT_EQ(r.generation.tools_json.size(), 1u);
  EXPECT_EQ(r.generation.tools_json[0], kWeatherTool);
  EXPECT_TRUE(r.parse_tool_calls);
  EXPECT_EQ(r.generation.grammar, nullptr);  // "auto": the model decides
}

TEST(OutputControlsTest, ToolChoiceNoneOffersNoTools) {
  const ChatRequest r = Parse(WithTools(R"(, "tool_choice": "none")"));
  EXPECT_TRUE(r.generation.tools_json.empty());
  EXPECT_FALSE(r.parse_tool_calls);
}

TEST(OutputControlsTest, BadToolsAndChoicesNameTheField) {
  EXPECT_EQ(ErrorOf(WithTools(R"(, "tool_choice": "sometimes")"), "tool_choice"),
            "tool_choice: \"sometimes\" is not one of none, auto, required, or {\"type\": "
            "\"function\", \"function\": {\"name\": ...}}");
  EXPECT_EQ(
      ErrorOf(WithTools(R"(, "tool_choice": {"type": "function", "function": {"name": "f"}})"),
              "tool_choice.function.name"),
      "tool_choice.function.name: \"f\" is not one of the tools");
  EXPECT_EQ(
      ErrorOf(R"({"messages": [{"role": "user", "content": "hi"}], "tool_choice": "required"})",
              "tool_choice"),
      "tool_choice: needs \"tools\"");
  EXPECT_EQ(ErrorOf(R"({"messages": [], "tools": [{"type": "retrieval"}]})", "tools[0].type"),
            "tools[0].type: \"retrieval\" is not supported; only \"function\" tools are");
  EXPECT_EQ(
      ErrorOf(R"({"messages": [], "tools": [{"type": "function", "function": {"name": "a b"}}]})",
              "tools[0].function.name"),
      "tools[0].function.name: must be 1 to 64 letters, digits, '_', '-' or '.', got \"a b\"");
  EXPECT_EQ(ErrorOf(std::string(R"({"messages": [], "tools": [)") + kWeatherTool + "," +
                        kWeatherTool + "]}",
                    "tools[1].function.name"),
            "tools[1].function.name: \"get_weather\" is defined twice");
  EXPECT_EQ(ErrorOf(R"({"messages": [], "functions": []})", "functions"),
            "functions: is the deprecated form of \"tools\"; send that instead");
  EXPECT_EQ(
      ErrorOf(
          WithTools(R"(, "tool_choice": "required", "response_format": {"type": "json_object"})"),
          "response_format"),
      "response_format: cannot be combined with tool_choice \"required\": the answer is a "
      "tool call");
}

TEST(OutputControlsTest, ResponseFormatTypes) {
  EXPECT_EQ(
      ErrorOf(R"({"messages": [], "response_format": {"type": "xml"}})", "response_format.type"),
      "response_format.type: \"xml\" is not one of text, json_object, json_schema");
  EXPECT_EQ(ErrorOf(R"({"messages": [], "response_format": {"schema": {"type": "object"}}})",
                    "response_format.type"),
            "response_format.type: is required beside a schema; use \"json_schema\" (or "
            "\"json_object\")");
  EXPECT_EQ(ErrorOf(R"({"messages": [], "response_format": {"json_schema": {"schema": {}}}})",
                    "response_format.type"),
            "response_format.type: is required beside a schema; use \"json_schema\" (or "
            "\"json_object\")");
  EXPECT_EQ(Parse(R"({"messages": [{"role": "user", "content": "hi"}], "response_format": {}})")
                .generation.grammar,
            nullptr);
  EXPECT_EQ(ErrorOf(R"({"messages": [], "response_format": {"type": "json_schema"}})",
                    "response_format.json_schema"),
            "response_format.json_schema: is required when type is \"json_schema\"");
  EXPECT_EQ(
      Parse(
          R"({"messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "text"}})")
          .generation.grammar,
      nullptr);
}

TEST(OutputControlsTest, ChoicesAndLogitBias) {
  nlohmann::json body = Body();
  body["n"] = 3;
  body["logit_bias"] = {{"1234", -100}, {"7", 2.5}};
  const ChatRequest r = Parse(body.dump());
  EXPECT_EQ(r.generation.n, 3);
  ASSERT_EQ(r.generation.logit_bias.size(), 2u);
  EXPECT_EQ(r.generation.logit_bias[0].token, 1234);
  EXPECT_EQ(r.generation.logit_bias[0].bias, -100.0f);
  EXPECT_EQ(r.generation.logit_bias[1].token, 7);

  body["n"] = 0;
  EXPECT_EQ(ErrorOf(body.dump(), "n"), "n: must be between 1 and 128, got 0");
  body["n"] = 1;
  body["logit_bias"] = {{"hello", 1}};
  EXPECT_EQ(ErrorOf(body.dump(), "logit_bias.hello"),
            "logit_bias.hello: keys must be token ids, got \"hello\"");
  body["logit_bias"] = {{"5", "up"}};
  EXPECT_EQ(ErrorOf(body.dump(), "logit_bias.5"), "logit_bias.5: expected a number, got string");
}

}  // namespace
}  // namespace qvl
