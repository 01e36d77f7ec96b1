#include "server/anthropic_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "anthropic_test_fixture.h"
#include "text/chat_template.h"

namespace qvl {
namespace {

using ::qvl::testing::AnthropicRequestTest;
using ::qvl::testing::Ask;

// Written by hand so that key order is the client's. The same tool in both APIs' shapes.
constexpr char kTool[] =
    R"({"name": "get_weather", "description": "Weather now", "input_schema": {"type": "object",)"
    R"( "properties": {"city": {"type": "string"}}, "required": ["city"]}})";
constexpr char kChatTool[] =
    R"({"type": "function", "function": {"name": "get_weather", "description": "Weather now",)"
    R"( "parameters": {"type": "object", "properties": {"city": {"type": "string"}},)"
    R"( "required": ["city"]}}})";
constexpr char kSchema[] = R"({"type": "object", "properties": {"b": {"type": "string"}}})";

// An Anthropic body with the tool and `extra` members.
std::string WithTool(const std::string& extra) {
  return std::string(R"({"max_tokens": 64, "messages": [{"role": "user", "content": "Paris?"}],)"
                     R"( "tools": [)") +
         kTool + "]" + extra + "}";
}
// The chat body asking the same, with `extra` members.
std::string ChatWithTool(const std::string& extra) {
  return std::string(R"({"messages": [{"role": "user", "content": "Paris?"}], "tools": [)") +
         kChatTool + "]" + extra + "}";
}

TEST_F(AnthropicRequestTest, GenerationFieldsAndTheTokenLimit) {
  nlohmann::json body = Ask("hi");
  body.update({{"stream", true},
               {"temperature", 0.5},
               {"top_p", 0.9},
               {"top_k", 20},
               {"stop_sequences", {"END", "STOP"}},
               {"metadata", {{"user_id", "u-1"}}},
               {"service_tier", "standard_only"},
               {"max_image_tokens", 256},
               {"seed", 3}});
  const AnthropicRequest r = Parse(body);
  const GenerationRequest& g = r.generation;
  EXPECT_EQ(r.model, "qwen3-vl");
  EXPECT_TRUE(r.stream);
  // message_start's usage needs the prompt's size before the first token.
  EXPECT_TRUE(r.generation.report_progress);
  EXPECT_FALSE(r.parse_tool_calls);
  EXPECT_EQ(g.max_tokens, 64);
  EXPECT_EQ(g.max_tokens_field, "max_tokens");
  EXPECT_FLOAT_EQ(*g.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(*g.sampling.top_p, 0.9f);
  EXPECT_EQ(*g.sampling.top_k, 20);
  EXPECT_EQ(*g.sampling.seed, 3u);
  EXPECT_EQ(g.stop, (std::vector<std::string>{"END", "STOP"}));
  EXPECT_EQ(g.image_budget.max_pixels, 256 * 1024);
  EXPECT_EQ(g.grammar, nullptr);
  EXPECT_TRUE(g.tools_json.empty());
  body.erase("max_tokens");
  EXPECT_EQ(Parse(body).generation.max_tokens, 0);  // the server's default

  body["max_tokens"] = 0;
  EXPECT_EQ(ErrorOf(body, "max_tokens"), "max_tokens: must be between 1 and 1048576, got 0");
  body["max_tokens"] = 64;
  body["temperature"] = 3;
  EXPECT_EQ(ErrorOf(body, "temperature"), "temperature: must be between 0 and 2, got 3");
  body["temperature"] = 1;
  body["stop_sequences"] = "END";
  EXPECT_EQ(ErrorOf(body, "stop_sequences"), "stop_sequences: expected an array, got string");
  body["stop_sequences"] = {"END", ""};
  EXPECT_EQ(ErrorOf(body, "stop_sequences[1]"), "stop_sequences[1]: stop strings cannot be empty");
  body["stop_sequences"] = std::vector<std::string>(17, "x");
  EXPECT_EQ(ErrorOf(body, "stop_sequences"),
            "stop_sequences: at most 16 stop strings are supported, got 17");
  body["stop_sequences"] = {"END"};
  body["stream"] = "yes";
  EXPECT_EQ(ErrorOf(body, "stream"), "stream: expected true or false, got string");
  body["stream"] = false;
  EXPECT_FALSE(Parse(body).generation.report_progress);
  body["service_tier"] = "priority";
  EXPECT_EQ(ErrorOf(body, "service_tier"),
            "service_tier: \"priority\" is not one of auto, standard_only");
  body["service_tier"] = "auto";
  body["metadata"] = "u-1";
  EXPECT_EQ(ErrorOf(body, "metadata"), "metadata: expected an object, got string");
  body["metadata"] = {{"user_id", 7}};
  EXPECT_EQ(ErrorOf(body, "metadata.user_id"), "metadata.user_id: expected a string, got integer");
  body["metadata"] = {{"user_id", nullptr}};
  EXPECT_EQ(Parse(body).generation.max_tokens, 64);
  body["model"] = "claude-sonnet-4-5";
  EXPECT_EQ(ErrorOf(body, "model", ErrorCode::kNotFound).rfind("model: ", 0), 0u);
}

// A count_tokens body has no max_tokens, stream or sampling: none of them is read.
TEST_F(AnthropicRequestTest, CountTokensReadsOnlyWhatMakesThePrompt) {
  nlohmann::json body = Ask("hi");
  body.update({{"max_tokens", 0},
               {"stream", "yes"},
               {"temperature", 9},
               {"stop_sequences", "END"},
               {"system", "Be brief."},
               {"thinking", {{"type", "disabled"}}},
               {"max_image_tokens", 256}});
  const AnthropicRequest r = Parse(body, AnthropicBody::kCountTokens);
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(r.generation.max_tokens, 0);
  EXPECT_EQ(r.generation.sampling.temperature, std::nullopt);
  EXPECT_TRUE(r.generation.stop.empty());
  EXPECT_EQ(r.generation.messages.size(), 2u);
  EXPECT_EQ(r.generation.image_budget.max_pixels, 256 * 1024);
  body["tools"] = nlohmann::json::parse(std::string("[") + kTool + "]");
  EXPECT_TRUE(Parse(body, AnthropicBody::kCountTokens).parse_tool_calls);
  EXPECT_EQ(Parse(body, AnthropicBody::kCountTokens).generation.tools_json.size(), 1u);
}

TEST_F(AnthropicRequestTest, ThinkingMustSayWhatTheTemplateDoes) {
  nlohmann::json body = Ask("hi");
  body["thinking"] = {{"type", "disabled"}};
  EXPECT_EQ(Parse(body).generation.messages.size(), 1u);
  const std::string instruct =
      "thinking.type: this model does not think (a Qwen3-VL Instruct model); leave thinking out "
      "or set its type to disabled";
  body["thinking"] = {{"type", "enabled"}, {"budget_tokens", 1024}};
  body["max_tokens"] = 2048;
  EXPECT_EQ(ErrorOf(body, "thinking.type"), instruct);
  body["thinking"] = {{"type", "adaptive"}};
  EXPECT_EQ(ErrorOf(body, "thinking.type"), instruct);

  policy_.chat_template = ChatTemplateKind::kThinking;
  EXPECT_EQ(Parse(body).generation.max_tokens, 2048);
  EXPECT_EQ(Parse(body).generation.reasoning_budget, -1);
  body["thinking"] = {{"type", "enabled"}, {"budget_tokens", 1024}};
  EXPECT_EQ(Parse(body).generation.max_tokens, 2048);
  EXPECT_EQ(Parse(body).generation.reasoning_budget, 1024);
  body["thinking"] = {{"type", "disabled"}};
  EXPECT_EQ(ErrorOf(body, "thinking.type"),
            "thinking.type: this model always thinks (a Qwen3-VL Thinking model: its chat "
            "template opens the reasoning, which comes in thinking blocks); leave thinking out or "
            "set its type to enabled or adaptive");
  body["thinking"] = {{"type", "enabled"}, {"budget_tokens", 1000}};
  EXPECT_EQ(ErrorOf(body, "thinking.budget_tokens"),
            "thinking.budget_tokens: must be between 1024 and 1048576, got 1000");
  body["thinking"] = {{"type", "enabled"}, {"budget_tokens", 2048}};
  EXPECT_EQ(ErrorOf(body, "thinking.budget_tokens"),
            "thinking.budget_tokens: must be less than max_tokens (2048 >= 2048)");
  body.erase("max_tokens");
  EXPECT_EQ(Parse(body).generation.max_tokens, 0);
  EXPECT_EQ(Parse(body, AnthropicBody::kCountTokens).generation.messages.size(), 1u);
  body["thinking"] = {{"type", "enabled"}};
  EXPECT_EQ(ErrorOf(body, "thinking.budget_tokens"),
            "thinking.budget_tokens: is required when type is \"enabled\"");
  body["thinking"] = {{"type", "on"}};
  EXPECT_EQ(ErrorOf(body, "thinking.type"),
            "thinking.type: \"on\" is not one of enabled, disabled, adaptive");
  body["thinking"] = true;
  EXPECT_EQ(ErrorOf(body, "thinking"), "thinking: expected an object, got boolean");
}

// Anthropic's prefill: a final assistant message is continued.
TEST_F(AnthropicRequestTest, AFinalAssistantMessageIsContinued) {
  nlohmann::json body = Ask("Name a colour.");
  body["messages"].push_back({{"role", "assistant"}, {"content", "The colour is"}});
  AnthropicRequest r = Parse(body);
  EXPECT_TRUE(r.generation.continue_final_message);
  EXPECT_FALSE(r.generation.add_generation_prompt);
  EXPECT_EQ(RenderContinuedChat(r.generation.messages),
            "<|im_start|>user\nName a colour.<|im_end|>\n<|im_start|>assistant\nThe colour is");
  EXPECT_TRUE(Parse(body, AnthropicBody::kCountTokens).generation.continue_final_message);

  // An empty one asks for nothing: a new turn is opened.
  body["messages"][1]["content"] = nlohmann::json::array();
  r = Parse(body);
  EXPECT_FALSE(r.generation.continue_final_message);
  EXPECT_EQ(r.generation.messages.size(), 1u);
  body["messages"] = {{{"role", "assistant"}, {"content", ""}}};
  EXPECT_EQ(ErrorOf(body, "messages"), "messages: has no message to answer");

  body = Ask("Name a colour.");
  body["messages"].push_back({{"role", "assistant"}, {"content", "{\"b\": "}});
  body["output_format"] = {{"type", "json_schema"}, {"schema", nlohmann::json::parse(kSchema)}};
  EXPECT_EQ(ErrorOf(body, "output_format").rfind("output_format: a grammar ", 0), 0u);
  body.erase("output_format");
  body["messages"][1]["content"] = {
      {{"type", "tool_use"}, {"id", "t"}, {"name", "f"}, {"input", {{"a", 1}}}}};
  EXPECT_EQ(ErrorOf(body, "messages").rfind("messages: ", 0), 0u);
  nlohmann::json forced = nlohmann::json::parse(WithTool(R"(, "tool_choice": {"type": "any"})"));
  forced["messages"].push_back({{"role", "assistant"}, {"content", "I will"}});
  EXPECT_EQ(ErrorOf(forced, "tool_choice").rfind("tool_choice: a grammar ", 0), 0u);
}

TEST_F(AnthropicRequestTest, ToolChoiceIsChatsToolChoice) {
  const AnthropicRequest automatic = ParseRaw(WithTool(""));
  const ChatRequest chat_auto = ParseChat(ChatWithTool(""));
  EXPECT_TRUE(automatic.parse_tool_calls);
  ASSERT_EQ(automatic.generation.tools_json.size(), 1u);
  EXPECT_EQ(automatic.generation.tools_json[0], kChatTool);
  EXPECT_EQ(automatic.generation.tools_json, chat_auto.generation.tools_json);
  EXPECT_EQ(automatic.generation.grammar, nullptr);
  EXPECT_EQ(ParseRaw(WithTool(R"(, "tool_choice": {"type": "auto"})")).generation.grammar, nullptr);

  const struct {
    const char* anthropic;
    const char* chat;
  } forced[] = {
      {R"({"type": "any"})", R"("required")"},
      {R"({"type": "any", "disable_parallel_tool_use": true})",
       R"("required", "parallel_tool_calls": false)"},
      {R"({"type": "tool", "name": "get_weather"})",
       R"({"type": "function", "function": {"name": "get_weather"}})"},
  };
  for (const auto& c : forced) {
    SCOPED_TRACE(c.anthropic);
    const AnthropicRequest a =
        ParseRaw(WithTool(std::string(R"(, "tool_choice": )") + c.anthropic));
    const ChatRequest chat = ParseChat(ChatWithTool(std::string(R"(, "tool_choice": )") + c.chat));
    EXPECT_TRUE(a.parse_tool_calls);
    EXPECT_EQ(a.generation.tools_json, chat.generation.tools_json);
    ASSERT_NE(a.generation.grammar, nullptr);
    EXPECT_EQ(a.generation.grammar, chat.generation.grammar);
  }
  EXPECT_NE(ParseRaw(WithTool(R"(, "tool_choice": {"type": "any"})")).generation.grammar,
            ParseRaw(WithTool(R"(, "tool_choice": {"type": "tool", "name": "get_weather"})"))
                .generation.grammar);

  const AnthropicRequest none = ParseRaw(WithTool(R"(, "tool_choice": {"type": "none"})"));
  EXPECT_FALSE(none.parse_tool_calls);
  EXPECT_TRUE(none.generation.tools_json.empty());
  EXPECT_EQ(none.generation.grammar, nullptr);

  EXPECT_EQ(
      RawErrorOf(WithTool(R"(, "tool_choice": {"type": "tool", "name": "f"})"), "tool_choice.name"),
      "tool_choice.name: \"f\" is not one of the tools");
  EXPECT_EQ(RawErrorOf(WithTool(R"(, "tool_choice": {"type": "tool"})"), "tool_choice.name"),
            "tool_choice.name: is required");
  EXPECT_EQ(RawErrorOf(WithTool(R"(, "tool_choice": {"type": "required"})"), "tool_choice.type"),
            "tool_choice.type: \"required\" is not one of auto, any, tool, none");
  EXPECT_EQ(RawErrorOf(WithTool(R"(, "tool_choice": "any")"), "tool_choice"),
            "tool_choice: expected an object, got string");
  EXPECT_EQ(
      RawErrorOf(WithTool(R"(, "tool_choice": {"type": "any", "disable_parallel_tool_use": 1})"),
                 "tool_choice.disable_parallel_tool_use"),
      "tool_choice.disable_parallel_tool_use: expected true or false, got integer");
  nlohmann::json no_tools = Ask("hi");
  no_tools["tool_choice"] = {{"type", "any"}};
  EXPECT_EQ(ErrorOf(no_tools, "tool_choice"), "tool_choice: needs \"tools\"");
  no_tools["tool_choice"] = {{"type", "auto"}};
  EXPECT_FALSE(Parse(no_tools).parse_tool_calls);
}

TEST_F(AnthropicRequestTest, ToolsAreCheckedAsChatChecksThem) {
  auto with_tools = [](const std::string& tools) {
    return std::string(R"({"messages": [{"role": "user", "content": "hi"}], "tools": )") + tools +
           "}";
  };
  EXPECT_EQ(RawErrorOf(with_tools(R"([{"type": "web_search_20250305", "name": "web_search"}])"),
                       "tools[0].type"),
            "tools[0].type: \"web_search_20250305\" is one of Anthropic's own tools (run on its "
            "servers or built into its models); qvl offers the tools a request defines: "
            "{\"name\", \"description\", \"input_schema\"}");
  EXPECT_NE(
      RawErrorOf(with_tools(R"([{"type": "bash_20250124", "name": "bash"}])"), "tools[0].type"),
      "no error");
  EXPECT_EQ(ParseRaw(with_tools(R"([{"type": "custom", "name": "f", "input_schema": {}}])"))
                .generation.tools_json,
            std::vector<std::string>{
                R"({"type": "function", "function": {"name": "f", "parameters": {}}})"});
  EXPECT_EQ(RawErrorOf(with_tools(R"([{"name": "f"}])"), "tools[0].input_schema"),
            "tools[0].input_schema: is required");
  EXPECT_EQ(RawErrorOf(with_tools(R"([{"name": "a b", "input_schema": {}}])"), "tools[0].name"),
            "tools[0].name: must be 1 to 64 letters, digits, '_', '-' or '.', got \"a b\"");
  EXPECT_EQ(RawErrorOf(with_tools(R"([{"name": "f", "input_schema": {}, "cache_control": 1}])"),
                       "tools[0].cache_control"),
            "tools[0].cache_control: expected an object, got integer");
  EXPECT_EQ(RawErrorOf(with_tools(R"([{"name": "f", "input_schema": {}},)"
                                  R"( {"name": "f", "input_schema": {}}])"),
                       "tools[1].name"),
            "tools[1].name: \"f\" is defined twice");
  EXPECT_EQ(RawErrorOf(with_tools(R"([{"name": "f", "input_schema": {"type": "integer", )"
                                  R"("multipleOf": 3}}])"),
                       "tools[0].input_schema.multipleOf")
                .rfind("tools[0].input_schema.multipleOf: ", 0),
            0u);
  EXPECT_EQ(RawErrorOf(with_tools(R"({"name": "f"})"), "tools"),
            "tools: expected an array, got object");
}

TEST_F(AnthropicRequestTest, OutputFormatCompilesTheSchemaAsChatDoes) {
  const std::string ask = R"({"messages": [{"role": "user", "content": "hi"}], )";
  const ChatRequest chat = ParseChat(
      ask +
      R"("response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": )" +
      kSchema + "}}}");
  ASSERT_NE(chat.generation.grammar, nullptr);
  const AnthropicRequest top =
      ParseRaw(ask + R"("output_format": {"type": "json_schema", "schema": )" + kSchema + "}}");
  EXPECT_EQ(top.generation.grammar, chat.generation.grammar);
  const AnthropicRequest config = ParseRaw(
      ask + R"("output_config": {"effort": "high", "format": {"type": "json_schema", "schema": )" +
      kSchema + "}}}");
  EXPECT_EQ(config.generation.grammar, chat.generation.grammar);
  EXPECT_EQ(ParseRaw(ask + R"("output_config": {"effort": "low"}})").generation.grammar, nullptr);

  EXPECT_EQ(
      RawErrorOf(ask + R"("output_format": {"type": "json_schema", "schema": {}},)"
                       R"( "output_config": {"format": {"type": "json_schema", "schema": {}}}})",
                 "output_config.format"),
      "output_config.format: cannot be combined with output_format; send one of them");
  EXPECT_EQ(RawErrorOf(ask + R"("output_format": {"type": "json_object"}})", "output_format.type"),
            "output_format.type: \"json_object\" is not supported; use {\"type\": \"json_schema\", "
            "\"schema\": {...}}");
  EXPECT_EQ(RawErrorOf(ask + R"("output_config": {"format": {"type": "json_schema"}}})",
                       "output_config.format.schema"),
            "output_config.format.schema: is required when type is \"json_schema\"");
  EXPECT_EQ(RawErrorOf(ask + R"js("output_format": {"type": "json_schema", "schema": {"type": )js"
                             R"js("object", "properties": {"x": {"type": "string", )js"
                             R"js("pattern": "(?=a)"}}}}})js",
                       "output_format.schema.properties.x.pattern")
                .rfind("output_format.schema.properties.x.pattern: ", 0),
            0u);
  EXPECT_EQ(
      RawErrorOf(WithTool(std::string(R"(, "tool_choice": {"type": "any"}, "output_format": )"
                                      R"({"type": "json_schema", "schema": )") +
                          kSchema + "}"),
                 "output_format"),
      "output_format: cannot be combined with tool_choice \"any\": the answer is a tool call");
  EXPECT_EQ(RawErrorOf(WithTool(std::string(R"(, "tool_choice": {"type": "tool", "name": )"
                                            R"("get_weather"}, "output_config": {"format": )"
                                            R"({"type": "json_schema", "schema": )") +
                                kSchema + "}}"),
                       "output_config.format"),
            "output_config.format: cannot be combined with tool_choice \"get_weather\": the answer "
            "is a tool call");
  // Tools offered as auto leave the format in force, as in chat.
  EXPECT_NE(
      ParseRaw(WithTool(std::string(R"(, "output_format": {"type": "json_schema", "schema": )") +
                        kSchema + "}"))
          .generation.grammar,
      nullptr);
}

TEST_F(AnthropicRequestTest, FeaturesOfAnthropicsServersAreRefused) {
  nlohmann::json body = Ask("hi");
  body["mcp_servers"] = {{{"type", "url"}, {"url", "https://example.com/mcp"}, {"name", "x"}}};
  EXPECT_EQ(ErrorOf(body, "mcp_servers"),
            "mcp_servers: is not supported: qvl connects to no MCP server; offer the server's "
            "tools as tools and call them yourself");
  body["mcp_servers"] = nlohmann::json::array();
  EXPECT_EQ(Parse(body).generation.messages.size(), 1u);
  body["container"] = "container_1";
  EXPECT_EQ(ErrorOf(body, "container"),
            "container: is not supported: qvl runs no code execution containers");
  body.erase("container");
  body["context_management"] = {{"edits", nlohmann::json::array()}};
  EXPECT_EQ(ErrorOf(body, "context_management"),
            "context_management: is not supported: qvl never edits the conversation; send what "
            "fits the context");
  body.erase("context_management");
  body["unknown_field"] = {{"anything", 1}};  // unknown fields are ignored, as everywhere
  EXPECT_EQ(Parse(body).generation.messages.size(), 1u);
  EXPECT_EQ(RawErrorOf("[1]", ""), "the request body must be a JSON object, got array");
}

}  // namespace
}  // namespace qvl
