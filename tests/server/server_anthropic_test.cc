// POST /v1/messages and /v1/messages/count_tokens (Anthropic's Messages API) over HTTP on
// 127.0.0.1 with the tiny fixture model: the fixture cases sent in Anthropic's shape give
// the golden answers, streamed as Anthropic's events and not; the same conversation gives
// the same prompt as on /v1/chat/completions (system, tool calls and results, a prefilled
// answer); errors come in Anthropic's shape; x-api-key is a key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chat_question.h"
#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

// A fixture's chat request in Anthropic's shape (images as base64 sources); false when it
// holds a part the Messages API has no type for (videos).
bool ToAnthropic(const nlohmann::json& chat, nlohmann::json* out) {
  nlohmann::json messages = nlohmann::json::array();
  nlohmann::json system;
  for (const nlohmann::json& message : chat["messages"]) {
    if (message["role"] == "system") {
      system = message["content"];
      continue;
    }
    nlohmann::json turn = {{"role", message["role"]}};
    if (message["content"].is_string()) {
      turn["content"] = message["content"];
    } else {
      turn["content"] = nlohmann::json::array();
      for (const nlohmann::json& part : message["content"]) {
        if (part["type"] == "text") {
          turn["content"].push_back({{"type", "text"}, {"text", part["text"]}});
        } else if (part["type"] == "image_url") {
          // "data:image/jpeg;base64,PAYLOAD"
          const std::string url = part["image_url"]["url"];
          const size_t semicolon = url.find(';');
          const size_t comma = url.find(',');
          turn["content"].push_back({{"type", "image"},
                                     {"source",
                                      {{"type", "base64"},
                                       {"media_type", url.substr(5, semicolon - 5)},
                                       {"data", url.substr(comma + 1)}}}});
        } else {
          return false;
        }
      }
    }
    messages.push_back(std::move(turn));
  }
  *out = {{"model", chat["model"]},
          {"messages", std::move(messages)},
          {"max_tokens", chat["max_tokens"]},
          {"temperature", 0}};
  if (!system.is_null()) (*out)["system"] = system;
  return true;
}

// The golden answer as text blocks hold it: an answer of whitespace alone makes no block
// (Anthropic refuses one sent back in a later turn).
std::string ExpectedText(const TinyCase& c) {
  return c.greedy_text.find_first_not_of(" \t\r\n") == std::string::npos ? "" : c.greedy_text;
}

std::string StopReason(const TinyCase& c) {
  return c.finish_reason == "stop" ? "end_turn" : "max_tokens";
}

// The text of a Message's text blocks.
std::string MessageText(const nlohmann::json& message) {
  std::string text;
  for (const nlohmann::json& block : message["content"]) {
    if (block["type"] == "text") text += block["text"].get<std::string>();
  }
  return text;
}

// Greedy, and long enough to fill a whole KV page (16 tokens), which the prefix cache
// shares.
const char kQuestion[] = "Why is the sky blue? Answer in plain words for a curious child.";

class ServerAnthropicTest : public SharedServerTest {
 protected:
  static HttpResult Messages(const nlohmann::json& body, const httplib::Headers& headers = {}) {
    return PostJson(*harness_, "/v1/messages", body.dump(), headers);
  }
  static HttpResult CountTokens(const nlohmann::json& body) {
    return PostJson(*harness_, "/v1/messages/count_tokens", body.dump());
  }
  // The prompt's size as chat completions counts it.
  static int ChatPromptTokens(const nlohmann::json& chat) {
    const HttpResult r = Chat(chat);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.json["usage"]["prompt_tokens"].get<int>();
  }

  static void ExpectError(const HttpResult& r, int status, const std::string& type,
                          const std::string& message_part) {
    EXPECT_EQ(r.status, status) << r.body;
    ASSERT_TRUE(r.json.is_object()) << r.body;
    EXPECT_EQ(r.json["type"], "error") << r.body;
    EXPECT_EQ(r.json["error"]["type"], type) << r.body;
    EXPECT_NE(r.json["error"]["message"].get<std::string>().find(message_part), std::string::npos)
        << r.body;
  }
};

TEST_F(ServerAnthropicTest, NonStreamedAnswersEqualTheGoldens) {
  int cases = 0;
  for (const TinyCase& c : LoadTinyCases()) {
    nlohmann::json body;
    if (!ToAnthropic(c.request, &body)) continue;
    SCOPED_TRACE(c.name);
    ++cases;
    const HttpResult r = Messages(body);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.content_type, "application/json");
    const nlohmann::json& j = r.json;
    EXPECT_EQ(j["type"], "message");
    EXPECT_EQ(j["role"], "assistant");
    EXPECT_EQ(j["id"].get<std::string>().rfind("msg_", 0), 0u);
    EXPECT_EQ(j["model"], "qwen3-vl");
    EXPECT_EQ(MessageText(j), ExpectedText(c));
    EXPECT_EQ(j["stop_reason"], StopReason(c));
    EXPECT_TRUE(j["stop_sequence"].is_null());
    const nlohmann::json& usage = j["usage"];
    EXPECT_EQ(usage["input_tokens"].get<int>() + usage["cache_read_input_tokens"].get<int>(),
              c.prompt_tokens);
    EXPECT_EQ(usage["output_tokens"], c.completion_tokens);

    // count_tokens counts the prompt the answer was given, images included.
    const HttpResult counted = CountTokens(body);
    ASSERT_EQ(counted.status, 200) << counted.body;
    EXPECT_EQ(counted.json, nlohmann::json({{"input_tokens", c.prompt_tokens}}));
  }
  EXPECT_GE(cases, 5);
}

TEST_F(ServerAnthropicTest, StreamedAnswersAreAnthropicsEvents) {
  for (const TinyCase& c : LoadTinyCases()) {
    nlohmann::json body;
    if (!ToAnthropic(c.request, &body)) continue;
    SCOPED_TRACE(c.name);
    body["stream"] = true;
    const HttpResult r = Messages(body);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.content_type, "text/event-stream");
    const std::vector<NamedEvent> events = NamedEvents(r.body);
    ASSERT_GE(events.size(), 3u) << r.body;
    std::string text;
    std::string stop_reason;
    int output_tokens = -1;
    nlohmann::json usage;
    for (const NamedEvent& e : events) {
      EXPECT_EQ(e.data["type"], e.name);
      if (e.name == "content_block_delta" && e.data["delta"]["type"] == "text_delta") {
        text += e.data["delta"]["text"].get<std::string>();
      } else if (e.name == "message_delta") {
        stop_reason = e.data["delta"]["stop_reason"];
        output_tokens = e.data["usage"]["output_tokens"];
        usage = e.data["usage"];
      }
    }
    // message_start has the prompt's counts already, as message_delta has them.
    const nlohmann::json& start = events.front().data["message"]["usage"];
    EXPECT_EQ(start["input_tokens"], usage["input_tokens"]);
    EXPECT_EQ(start["cache_read_input_tokens"], usage["cache_read_input_tokens"]);
    EXPECT_EQ(start["input_tokens"].get<int>() + start["cache_read_input_tokens"].get<int>(),
              c.prompt_tokens);
    EXPECT_EQ(start["output_tokens"], 0);
    EXPECT_EQ(text, ExpectedText(c));
    EXPECT_EQ(stop_reason, StopReason(c));
    EXPECT_EQ(output_tokens, c.completion_tokens);
    EXPECT_EQ(events.front().name, "message_start");
    EXPECT_EQ(events.front().data["message"]["id"].get<std::string>().rfind("msg_", 0), 0u);
    EXPECT_EQ(events.back().name, "message_stop");
  }
}

// Clients (the SDKs, LiteLLM) read the input tokens in message_start: they are those of
// the same request not streamed. The first request fills the prefix cache, so that the two
// compared read the same share of the prompt from it.
TEST_F(ServerAnthropicTest, MessageStartHasTheInputTokensOfTheWholeAnswer) {
  const TinyCase c = LoadTinyCase("02_one_image_jpeg");
  nlohmann::json body;
  ASSERT_TRUE(ToAnthropic(c.request, &body));
  ASSERT_EQ(Messages(body).status, 200);
  const HttpResult whole = Messages(body);
  ASSERT_EQ(whole.status, 200) << whole.body;
  body["stream"] = true;
  const HttpResult streamed = Messages(body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  const std::vector<NamedEvent> events = NamedEvents(streamed.body);
  ASSERT_GE(events.size(), 2u) << streamed.body;
  ASSERT_EQ(events[0].name, "message_start");
  EXPECT_EQ(events[1].name, "ping");
  const nlohmann::json& usage = events[0].data["message"]["usage"];
  EXPECT_GT(usage["input_tokens"].get<int>(), 0);
  EXPECT_EQ(usage["input_tokens"], whole.json["usage"]["input_tokens"]);
  EXPECT_EQ(usage["cache_read_input_tokens"], whole.json["usage"]["cache_read_input_tokens"]);
  // The engine's progress reports are for message_start alone: nothing else shows them.
  EXPECT_EQ(streamed.body.find("prompt_progress"), std::string::npos);
}

// The matched stop sequence is named, and the answer ends right before it.
TEST_F(ServerAnthropicTest, AStopSequenceIsNamed) {
  const TinyCase c = LoadTinyCase("01_text_only");
  ASSERT_GE(c.greedy_text.size(), 8u);
  const std::string stop = c.greedy_text.substr(4, 3);
  nlohmann::json body;
  ASSERT_TRUE(ToAnthropic(c.request, &body));
  body["stop_sequences"] = {"\x01never", stop};
  for (const bool stream : {false, true}) {
    SCOPED_TRACE(stream);
    body["stream"] = stream;
    const HttpResult r = Messages(body);
    ASSERT_EQ(r.status, 200) << r.body;
    nlohmann::json message = r.json;
    if (stream) {
      std::string text;
      for (const NamedEvent& e : NamedEvents(r.body)) {
        if (e.name == "message_delta") message = e.data["delta"];
        if (e.name == "content_block_delta") text += e.data["delta"]["text"].get<std::string>();
      }
      message["content"] = {{{"type", "text"}, {"text", text}}};
    }
    EXPECT_EQ(message["stop_reason"], "stop_sequence") << r.body;
    EXPECT_EQ(message["stop_sequence"], stop) << r.body;
    EXPECT_EQ(MessageText(message), c.greedy_text.substr(0, c.greedy_text.find(stop)));
  }
}

// The top-level system prompt, tool calls of the history and their results are the chat
// API's system message, tool_calls and tool messages: the same prompt, token for token.
TEST_F(ServerAnthropicTest, TheSameConversationIsTheSamePromptAsChat) {
  // Written out: the template shows tools in the client's key order.
  const std::string schema =
      R"({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})";
  const std::string anthropic =
      R"({"max_tokens": 4, "temperature": 0, "system": "You are terse.",)"
      R"( "tools": [{"name": "get_weather", "description": "Current weather",)"
      R"( "input_schema": )" +
      schema +
      R"(}], "messages": [{"role": "user", "content": "Weather in Paris?"},)"
      R"( {"role": "assistant", "content": [{"type": "text", "text": "Let me look."},)"
      R"( {"type": "tool_use", "id": "toolu_1", "name": "get_weather",)"
      R"( "input": {"city": "Paris"}}]},)"
      R"( {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",)"
      R"( "content": "21 C, sunny"}]}]})";
  const std::string chat =
      R"({"max_tokens": 4, "temperature": 0,)"
      R"( "tools": [{"type": "function", "function": {"name": "get_weather",)"
      R"( "description": "Current weather", "parameters": )" +
      schema +
      R"(}}], "messages": [{"role": "system", "content": "You are terse."},)"
      R"( {"role": "user", "content": "Weather in Paris?"},)"
      R"( {"role": "assistant", "content": [{"type": "text", "text": "Let me look."}],)"
      R"( "tool_calls": [{"id": "toolu_1", "type": "function", "function":)"
      R"( {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},)"
      R"( {"role": "tool", "tool_call_id": "toolu_1", "content": "21 C, sunny"}]})";
  const HttpResult counted = PostJson(*harness_, "/v1/messages/count_tokens", anthropic);
  ASSERT_EQ(counted.status, 200) << counted.body;
  const HttpResult chatted = PostJson(*harness_, "/v1/chat/completions", chat);
  ASSERT_EQ(chatted.status, 200) << chatted.body;
  EXPECT_EQ(counted.json["input_tokens"], chatted.json["usage"]["prompt_tokens"]);
  const HttpResult answered = PostJson(*harness_, "/v1/messages", anthropic);
  ASSERT_EQ(answered.status, 200) << answered.body;
  EXPECT_EQ(MessageText(answered.json), Content(chatted));
}

// A named tool is called: the grammar makes the tiny model's gibberish a valid call, which
// comes back as a tool_use block with its input as an object.
TEST_F(ServerAnthropicTest, AForcedToolIsAToolUseBlock) {
  const nlohmann::json schema = {
      {"type", "object"},
      {"properties",
       {{"city", {{"type", "string"}, {"maxLength", 20}}},
        {"unit", {{"type", "string"}, {"enum", {"celsius", "fahrenheit"}}}}}},
      {"required", {"city", "unit"}},
      {"additionalProperties", false}};
  nlohmann::json body = {{"max_tokens", 160},
                         {"temperature", 1},
                         {"seed", 3},
                         {"tools", {{{"name", "get_weather"}, {"input_schema", schema}}}},
                         {"tool_choice", {{"type", "tool"}, {"name", "get_weather"}}},
                         {"messages", {{{"role", "user"}, {"content", "Weather in Paris?"}}}}};
  for (const bool stream : {false, true}) {
    SCOPED_TRACE(stream);
    body["stream"] = stream;
    const HttpResult r = Messages(body);
    ASSERT_EQ(r.status, 200) << r.body;
    nlohmann::json call;
    std::string stop_reason;
    if (stream) {
      std::string input;
      for (const NamedEvent& e : NamedEvents(r.body)) {
        if (e.name == "content_block_start" && e.data["content_block"]["type"] == "tool_use") {
          call = e.data["content_block"];
        } else if (e.name == "content_block_delta" &&
                   e.data["delta"]["type"] == "input_json_delta") {
          input += e.data["delta"]["partial_json"].get<std::string>();
        } else if (e.name == "message_delta") {
          stop_reason = e.data["delta"]["stop_reason"];
        }
      }
      call["input"] = nlohmann::json::parse(input, nullptr, false);
    } else {
      for (const nlohmann::json& block : r.json["content"]) {
        if (block["type"] == "tool_use") call = block;
      }
      stop_reason = r.json["stop_reason"];
    }
    EXPECT_EQ(stop_reason, "tool_use") << r.body;
    EXPECT_EQ(call["name"], "get_weather") << r.body;
    EXPECT_EQ(call["id"].get<std::string>().rfind("toolu_", 0), 0u) << r.body;
    ASSERT_TRUE(call["input"].is_object()) << r.body;
    EXPECT_TRUE(call["input"]["city"].is_string()) << r.body;
    EXPECT_TRUE(call["input"]["unit"] == "celsius" || call["input"]["unit"] == "fahrenheit");
  }
}

// A final assistant message is continued (Anthropic's prefill), as chat's
// continue_final_message continues it.
TEST_F(ServerAnthropicTest, AFinalAssistantMessageIsContinued) {
  const nlohmann::json user = {{"role", "user"}, {"content", kQuestion}};
  const nlohmann::json prefill = {{"role", "assistant"}, {"content", "The sky"}};
  const HttpResult answered =
      Messages({{"max_tokens", 6}, {"temperature", 0}, {"messages", {user, prefill}}});
  ASSERT_EQ(answered.status, 200) << answered.body;
  const HttpResult chatted = Chat({{"max_tokens", 6},
                                   {"temperature", 0},
                                   {"continue_final_message", true},
                                   {"add_generation_prompt", false},
                                   {"messages", {user, prefill}}});
  ASSERT_EQ(chatted.status, 200) << chatted.body;
  EXPECT_EQ(MessageText(answered.json), Content(chatted));
  EXPECT_EQ(answered.json["usage"]["output_tokens"], 6);
}

TEST_F(ServerAnthropicTest, ErrorsComeInAnthropicsShape) {
  const nlohmann::json question = {{"max_tokens", 4},
                                   {"messages", {{{"role", "user"}, {"content", kQuestion}}}}};
  nlohmann::json body = question;
  body.erase("messages");
  ExpectError(Messages(body), 400, "invalid_request_error", "messages");
  body = question;
  body["model"] = "claude-opus-4";
  ExpectError(Messages(body), 404, "not_found_error", "claude-opus-4");
  body = question;
  body["tools"] = {{{"type", "web_search_20250305"}, {"name", "web_search"}}};
  ExpectError(Messages(body), 400, "invalid_request_error", "web_search_20250305");
  body = question;
  body["messages"][0]["content"] = {
      {{"type", "image"},
       {"source", {{"type", "base64"}, {"media_type", "image/png"}, {"data", "AAAA"}}}}};
  ExpectError(Messages(body), 400, "invalid_request_error", "messages[0].content[0]");
  body = question;
  body["max_tokens"] = 100000;
  ExpectError(Messages(body), 400, "invalid_request_error", "max_tokens");
  ExpectError(PostJson(*harness_, "/v1/messages", "{not json"), 400, "invalid_request_error", "");
  const HttpResult wrong_method = Get(*harness_, "/v1/messages");
  EXPECT_EQ(wrong_method.status, 405) << wrong_method.body;
  EXPECT_EQ(wrong_method.json["type"], "error") << wrong_method.body;
}

// GET /v1/models is read by both APIs' SDKs: its objects carry Anthropic's fields too.
TEST_F(ServerAnthropicTest, TheModelListReadsAsAnthropicsPage) {
  const HttpResult models = Get(*harness_, "/v1/models");
  ASSERT_EQ(models.status, 200) << models.body;
  const nlohmann::json& data = models.json["data"];
  ASSERT_FALSE(data.empty());
  EXPECT_EQ(models.json["has_more"], false);
  EXPECT_EQ(models.json["first_id"], data.front()["id"]);
  EXPECT_EQ(models.json["last_id"], data.back()["id"]);
  for (const nlohmann::json& model : data) {
    EXPECT_EQ(model["type"], "model");
    EXPECT_EQ(model["display_name"], model["id"]);
    const std::string created_at = model["created_at"];
    EXPECT_EQ(created_at.size(), 20u) << created_at;  // 2026-12-06T03:01:30Z
    EXPECT_EQ(created_at.back(), 'Z') << created_at;
  }
  const HttpResult one = Get(*harness_, "/v1/models/qwen3-vl");
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(one.json["type"], "model");
}

// Anthropic's clients send their key as x-api-key.
TEST(ServerAnthropicKeyTest, XApiKeyIsAKey) {
  HarnessOptions options = DefaultHarnessOptions();
  options.server.api_key = "sk-test";
  ServerHarness harness(options);
  const std::string body = R"({"max_tokens": 2, "messages": [{"role": "user", "content": "Hi"}]})";
  EXPECT_EQ(PostJson(harness, "/v1/messages", body, {{"x-api-key", "sk-test"}}).status, 200);
  EXPECT_EQ(PostJson(harness, "/v1/messages", body, {{"Authorization", "Bearer sk-test"}}).status,
            200);
  const HttpResult wrong = PostJson(harness, "/v1/messages", body, {{"x-api-key", "sk-nope"}});
  EXPECT_EQ(wrong.status, 401) << wrong.body;
  EXPECT_EQ(wrong.json["error"]["type"], "authentication_error") << wrong.body;
  EXPECT_NE(wrong.json["error"]["message"].get<std::string>().find("x-api-key"), std::string::npos);
  const HttpResult none = PostJson(harness, "/v1/messages", body);
  EXPECT_EQ(none.status, 401) << none.body;
  // The key is the server's, whichever API: x-api-key opens the OpenAI routes too.
  EXPECT_EQ(PostJson(harness, "/v1/chat/completions", body, {{"x-api-key", "sk-test"}}).status,
            200);
}

}  // namespace
}  // namespace qvl::testing
