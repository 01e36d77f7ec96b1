// Content blocks through ParseAnthropicRequest (anthropic_input.h).
#include "server/anthropic_input.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "anthropic_test_fixture.h"
#include "responses_test_fixture.h"
#include "text/chat_template.h"

namespace qvl {
namespace {

using ::qvl::testing::AnthropicRequestTest;
using ::qvl::testing::Ask;
using ::qvl::testing::Base64;
using ::qvl::testing::Describe;
using ::qvl::testing::PhotoBlock;
using ::qvl::testing::PhotoBytes;
using ::qvl::testing::PhotoDataUrl;

nlohmann::json TextBlock(const std::string& text) { return {{"type", "text"}, {"text", text}}; }

std::vector<uint8_t> Bytes(const std::string& s) { return {s.begin(), s.end()}; }

TEST_F(AnthropicRequestTest, ReadsEveryBlockKind) {
  nlohmann::json body = {
      {"system",
       {{{"type", "text"}, {"text", "Be brief."}, {"cache_control", {{"type", "ephemeral"}}}},
        TextBlock("Answer in French.")}},
      {"messages",
       {{{"role", "user"},
         {"content",
          {TextBlock("Look:"),
           PhotoBlock(),
           {{"type", "image"}, {"source", {{"type", "url"}, {"url", PhotoDataUrl()}}}}}}},
        {{"role", "assistant"},
         {"content",
          {{{"type", "thinking"}, {"thinking", "A cat, surely."}, {"signature", "sig"}},
           {{"type", "text"}, {"text", "A cat."}, {"citations", nlohmann::json::array()}},
           {{"type", "tool_use"},
            {"id", "toolu_1"},
            {"name", "zoom"},
            {"input", {{"x", 1}}},
            {"cache_control", {{"type", "ephemeral"}}}}}}},
        {{"role", "user"},
         {"content",
          {{{"type", "tool_result"}, {"tool_use_id", "toolu_1"}, {"content", "zoomed"}},
           {{"type", "tool_result"},
            {"tool_use_id", "toolu_2"},
            {"is_error", false},
            {"content", {TextBlock("cropped"), PhotoBlock()}}},
           TextBlock("Thanks")}}},
        {{"role", "assistant"},
         {"content", {{{"type", "redacted_thinking"}, {"data", "EuYBCkQY"}}, TextBlock("Bye.")}}},
        {{"role", "user"}, {"content", "Again?"}}}}};
  const AnthropicRequest r = Parse(body);
  const GenerationRequest& g = r.generation;
  EXPECT_EQ(Describe(g.messages),
            "system string: [Be brief.\n\nAnswer in French.]\n"
            "user parts: [Look:] [image] [image]\n"
            "assistant parts: [A cat.] call zoom{\"x\": 1}\n"
            "tool string: [zoomed]\n"
            "tool parts: [cropped] [image]\n"
            "user parts: [Thanks]\n"
            "assistant parts: [Bye.]\n"
            "user string: [Again?]\n");
  EXPECT_EQ(g.messages[2].reasoning, "A cat, surely.");
  EXPECT_EQ(g.messages[6].reasoning, std::nullopt);  // redacted reasoning is left out
  EXPECT_EQ(g.messages_field, "messages");
  EXPECT_FALSE(g.continue_final_message);
  ASSERT_EQ(g.images.size(), 3u);
  // The base64 source and the same bytes as a data URL are the same image.
  EXPECT_EQ(g.images[0].field, "messages[0].content[1].source.data");
  EXPECT_EQ(g.images[1].field, "messages[0].content[2].source.url");
  EXPECT_EQ(g.images[2].field, "messages[2].content[1].content[1].source.data");
  for (const ImageInput& image : g.images) {
    EXPECT_EQ(image.bytes, Bytes(PhotoBytes())) << image.field;
    EXPECT_EQ(image.detail, ImageDetail::kAuto);
  }
  EXPECT_EQ(g.images[2].name, "image 3");
}

// The same conversation through /v1/chat/completions and /v1/messages gives the same
// prompt and the same tool call grammar.
TEST_F(AnthropicRequestTest, ToolHistoryGivesTheChatMessages) {
  const std::string schema =
      R"({"type": "object", "properties": {"unit": {"type": "string"}, "city": {"type": "string"}}})";
  const AnthropicRequest a = ParseRaw(
      R"({"model": "qwen3-vl", "max_tokens": 64, "system": "Be brief.", "tool_choice": {"type": "any"},)"
      R"( "tools": [{"name": "get_weather", "description": "Weather now", "input_schema": )" +
      schema +
      R"(, "cache_control": {"type": "ephemeral"}}],)"
      R"( "messages": [{"role": "user", "content": "Weather in Paris?"},)"
      R"( {"role": "assistant", "content": [{"type": "text", "text": "Looking."},)"
      R"( {"type": "tool_use", "id": "toolu_1", "name": "get_weather",)"
      R"( "input": {"unit": "c", "city": "Paris"}}]},)"
      R"( {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",)"
      R"( "content": "18 C"}, {"type": "text", "text": "And tomorrow?"}]}]})");
  const ChatRequest chat = ParseChat(
      R"({"tool_choice": "required", "tools": [{"type": "function", "function": {"name": )"
      R"("get_weather", "description": "Weather now", "parameters": )" +
      schema +
      R"(}}],)"
      R"( "messages": [{"role": "system", "content": "Be brief."},)"
      R"( {"role": "user", "content": "Weather in Paris?"},)"
      R"( {"role": "assistant", "content": [{"type": "text", "text": "Looking."}],)"
      R"( "tool_calls": [{"id": "toolu_1", "type": "function", "function": {"name":)"
      R"( "get_weather", "arguments": "{\"unit\": \"c\", \"city\": \"Paris\"}"}}]},)"
      R"( {"role": "tool", "tool_call_id": "toolu_1", "content": "18 C"},)"
      R"( {"role": "user", "content": [{"type": "text", "text": "And tomorrow?"}]}]})");
  EXPECT_TRUE(a.parse_tool_calls);
  EXPECT_EQ(Describe(a.generation.messages), Describe(chat.generation.messages));
  // The input in the client's key order, as the template's tojson shows an object.
  EXPECT_EQ(a.generation.messages[2].tool_calls[0].arguments, R"({"unit": "c", "city": "Paris"})");
  EXPECT_EQ(a.generation.tools_json, chat.generation.tools_json);
  ASSERT_NE(a.generation.grammar, nullptr);
  EXPECT_EQ(a.generation.grammar, chat.generation.grammar);
  EXPECT_EQ(RenderChatTemplate(a.generation.messages, true, a.generation.tools_json),
            RenderChatTemplate(chat.generation.messages, true, chat.generation.tools_json));
  // An assistant turn of tool calls alone is chat's assistant message with null content.
  nlohmann::json calls_only = Ask("hi");
  calls_only["messages"].push_back(
      {{"role", "assistant"},
       {"content", {{{"type", "tool_use"}, {"id", "t"}, {"name", "f"}, {"input", {{"a", 1}}}}}}});
  calls_only["messages"].push_back(
      {{"role", "user"}, {"content", {{{"type", "tool_result"}, {"tool_use_id", "t"}}}}});
  EXPECT_EQ(Describe(Parse(calls_only).generation.messages),
            "user string: [hi]\nassistant string: call f{\"a\": 1}\ntool string:\n");
}

TEST_F(AnthropicRequestTest, ThinkingBlocksAreTheTurnsReasoning) {
  policy_.chat_template = ChatTemplateKind::kThinking;
  nlohmann::json body = Ask("Name a colour.");
  body["messages"].push_back(
      {{"role", "assistant"},
       {"content",
        {{{"type", "thinking"}, {"thinking", "Red is common."}, {"signature", "s"}},
         TextBlock("Red.")}}});
  body["messages"].push_back({{"role", "user"}, {"content", "Another?"}});
  const AnthropicRequest r = Parse(body);
  // The reasoning_content of the same turn through chat renders the same prompt.
  nlohmann::json chat = {{"messages",
                          {{{"role", "user"}, {"content", "Name a colour."}},
                           {{"role", "assistant"},
                            {"content", {TextBlock("Red.")}},
                            {"reasoning_content", "Red is common."}},
                           {{"role", "user"}, {"content", "Another?"}}}}};
  const ChatRequest c = ParseChat(chat.dump());
  EXPECT_EQ(r.generation.messages[1].reasoning, "Red is common.");
  EXPECT_EQ(RenderChatTemplate(r.generation.messages, true, {}, ChatTemplateKind::kThinking),
            RenderChatTemplate(c.generation.messages, true, {}, ChatTemplateKind::kThinking));
}

TEST_F(AnthropicRequestTest, BlockErrorsNameTheMessageAndBlock) {
  const std::string block = "messages[0].content[0]";
  auto user_block = [](nlohmann::json b) { return Ask(nlohmann::json::array({std::move(b)})); };
  auto assistant_block = [](nlohmann::json b) {
    nlohmann::json body = Ask("hi");
    body["messages"].push_back({{"role", "assistant"}, {"content", {std::move(b)}}});
    body["messages"].push_back({{"role", "user"}, {"content", "go on"}});
    return body;
  };
  nlohmann::json body = Ask("hi");
  body["messages"][0]["role"] = "system";
  EXPECT_EQ(ErrorOf(body, "messages[0].role"),
            "messages[0].role: messages have no system role here; use the top-level system");
  body["messages"][0]["role"] = "tool";
  EXPECT_EQ(ErrorOf(body, "messages[0].role"),
            "messages[0].role: unknown role \"tool\"; use user or assistant");
  body["messages"][0] = {{"role", "user"}};
  EXPECT_EQ(ErrorOf(body, "messages[0].content"), "messages[0].content: is required");
  body["messages"][0]["content"] = 3;
  EXPECT_EQ(ErrorOf(body, "messages[0].content"),
            "messages[0].content: expected a string or an array of content blocks, got integer");
  body["messages"] = nlohmann::json::array();
  EXPECT_EQ(ErrorOf(body, "messages"), "messages: needs at least one message");
  body.erase("messages");
  EXPECT_EQ(ErrorOf(body, "messages"), "messages: is required");

  const std::string read =
      "qvl reads text, image, tool_use, tool_result, thinking and redacted_thinking blocks";
  EXPECT_EQ(
      ErrorOf(user_block({{"type", "document"}, {"source", {{"type", "text"}, {"data", "x"}}}}),
              block + ".type"),
      block + ".type: documents are not supported; send their text in text blocks (" + read + ")");
  for (const char* type : {"search_result", "server_tool_use", "web_search_tool_result",
                           "container_upload", "mcp_tool_use", "audio"}) {
    EXPECT_EQ(ErrorOf(user_block({{"type", type}}), block + ".type"),
              StrCat(block, ".type: \"", type, "\" blocks are not supported; ", read));
  }
  EXPECT_EQ(ErrorOf(user_block({{"type", "text"}, {"text", "x"}, {"cache_control", "ephemeral"}}),
                    block + ".cache_control"),
            block + ".cache_control: expected an object, got string");
  EXPECT_EQ(ErrorOf(user_block({{"type", "text"}}), block + ".text"), block + ".text: is required");
  for (const char* type : {"tool_use", "thinking", "redacted_thinking"}) {
    EXPECT_EQ(ErrorOf(user_block({{"type", type}}), block + ".type"),
              StrCat(block, ".type: ", type, " blocks belong to assistant messages"));
  }
  const std::string turn = "messages[1].content[0]";
  EXPECT_EQ(
      ErrorOf(assistant_block({{"type", "tool_result"}, {"tool_use_id", "t"}}), turn + ".type"),
      turn + ".type: tool_result blocks belong to user messages");
  EXPECT_EQ(ErrorOf(assistant_block(PhotoBlock()), turn),
            turn +
                ": images are only accepted in user and tool messages (the chat template drops "
                "them from assistant messages)");
  EXPECT_EQ(
      ErrorOf(assistant_block({{"type", "tool_use"}, {"id", "t"}, {"name", "f"}, {"input", "{}"}}),
              turn + ".input"),
      turn + ".input: expected an object, got string");
  EXPECT_EQ(
      ErrorOf(assistant_block({{"type", "tool_use"}, {"id", "t"}, {"name", "f"}}), turn + ".input"),
      turn + ".input: is required");
  EXPECT_EQ(ErrorOf(assistant_block({{"type", "tool_use"}, {"name", "f"}, {"input", {{"a", 1}}}}),
                    turn + ".id"),
            turn + ".id: is required");
  EXPECT_EQ(
      ErrorOf(assistant_block({{"type", "thinking"}, {"signature", "s"}}), turn + ".thinking"),
      turn + ".thinking: is required");
  EXPECT_EQ(ErrorOf(user_block({{"type", "tool_result"},
                                {"tool_use_id", "t"},
                                {"content", {{{"type", "document"}}}}}),
                    block + ".content[0].type"),
            block +
                ".content[0].type: \"document\" blocks are not supported in a tool result; qvl "
                "reads text and image blocks");
  EXPECT_EQ(
      ErrorOf(user_block({{"type", "tool_result"}, {"tool_use_id", "t"}, {"content", 1}}),
              block + ".content"),
      block + ".content: expected a string or an array of text and image blocks, got integer");
  EXPECT_EQ(
      ErrorOf(user_block({{"type", "tool_result"}, {"content", "x"}}), block + ".tool_use_id"),
      block + ".tool_use_id: is required");
  body = Ask("hi");
  body["system"] = {{{"type", "image"}}};
  EXPECT_EQ(ErrorOf(body, "system[0].type"),
            "system[0].type: \"image\" blocks are not supported here; the system prompt is text "
            "blocks");
  body["system"] = 1;
  EXPECT_EQ(ErrorOf(body, "system"), "system: expected a string or text blocks, got integer");
}

TEST_F(AnthropicRequestTest, ImageSourcesGoThroughTheChatImagePolicy) {
  const std::string source = "messages[0].content[0].source";
  auto with_source = [](nlohmann::json s) {
    return Ask({{{"type", "image"}, {"source", std::move(s)}}});
  };
  EXPECT_EQ(ErrorOf(with_source({{"type", "file"}, {"file_id", "file_1"}}), source + ".type"),
            source +
                ".type: the Files API is not supported (qvl keeps no files); send the image as "
                "{\"type\": \"base64\", \"media_type\", \"data\"} or {\"type\": \"url\", \"url\"}");
  EXPECT_EQ(ErrorOf(with_source({{"type", "text"}, {"data", "x"}}), source + ".type"),
            source + ".type: \"text\" is not an image source; use base64 or url");
  EXPECT_EQ(ErrorOf(with_source(
                        {{"type", "base64"}, {"media_type", "application/pdf"}, {"data", "AAAA"}}),
                    source + ".media_type"),
            source +
                ".media_type: \"application/pdf\" is not an image type (image/jpeg, image/png, "
                "image/gif, image/webp)");
  EXPECT_EQ(
      ErrorOf(with_source({{"type", "base64"}, {"media_type", "image/png"}}), source + ".data"),
      source + ".data: is required");
  EXPECT_NE(
      ErrorOf(with_source({{"type", "base64"}, {"media_type", "image/png"}, {"data", "AA*A"}}),
              source + ".data"),
      "no error");
  EXPECT_EQ(ErrorOf(with_source({{"type", "url"}, {"url", "https://example.com/a.png"}}),
                    source + ".url"),
            source +
                ".url: this server does not fetch image URLs; send the image as a "
                "data:image/...;base64 URL (the operator can enable fetching with "
                "--allow-image-urls)");
  EXPECT_EQ(ErrorOf(Ask({{{"type", "image"}}}), "messages[0].content[0].source"),
            "messages[0].content[0].source: is required");
  policy_.media.max_image_bytes = 100;
  EXPECT_EQ(
      ErrorOf(Ask(nlohmann::json::array({PhotoBlock()})), source + ".data", ErrorCode::kTooLarge)
          .find(source + ".data: the image is "),
      0u);
  policy_.media.max_image_bytes = 1 << 20;
  policy_.max_images = 1;
  EXPECT_EQ(ErrorOf(Ask({PhotoBlock(), PhotoBlock()}), "messages[0].content[1].source.data"),
            "messages[0].content[1].source.data: too many images: this server accepts at most 1 "
            "per request");
  EXPECT_EQ(
      Parse(with_source(
                {{"type", "base64"}, {"media_type", "image/png"}, {"data", Base64("not a png")}}))
          .generation.images[0]
          .bytes,
      Bytes("not a png"));  // decoding is the engine's
}

}  // namespace
}  // namespace qvl
