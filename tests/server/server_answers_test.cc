// The fields that shape answers, over HTTP with the tiny fixture model: n answers to one
// prompt, prompt progress (return_progress) on chat and text completions, logit_bias, tool
// definitions in the prompt, structured output and tool calls.
#include <gtest/gtest.h>

#include <string>

#include "server_harness.h"
#include "text/chat_template.h"
#include "text/template_json.h"
#include "text/tokenizer.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

using ServerAnswersTest = SharedServerTest;

TEST_F(ServerAnswersTest, GreedyChoicesAllGiveTheGoldenAnswer) {
  const TinyCase c = LoadTinyCase("02_one_image_jpeg");
  nlohmann::json body = c.request;
  body["n"] = 3;
  const HttpResult r = Chat(body);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(r.json["choices"].size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r.json["choices"][i]["index"], i);
    EXPECT_EQ(r.json["choices"][i]["message"]["content"], c.greedy_text);
    EXPECT_EQ(r.json["choices"][i]["finish_reason"], c.finish_reason);
  }
  EXPECT_EQ(r.json["usage"]["prompt_tokens"], c.prompt_tokens);
  EXPECT_EQ(r.json["usage"]["completion_tokens"], 3 * c.completion_tokens);
}

TEST_F(ServerAnswersTest, StreamedChoicesAreToldApartByIndex) {
  const TinyCase c = LoadTinyCase("01_text_only");
  nlohmann::json body = c.request;
  body["n"] = 2;
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  const HttpResult r = Chat(body);
  ASSERT_EQ(r.status, 200) << r.body;
  const std::vector<nlohmann::json> events = SseEvents(r.body);
  std::string text[2];
  int finishes = 0;
  for (const nlohmann::json& e : events) {
    if (e == "[DONE]" || e["choices"].empty()) continue;
    const nlohmann::json& choice = e["choices"][0];
    const int index = choice["index"];
    ASSERT_TRUE(index == 0 || index == 1);
    if (choice["delta"].contains("content")) text[index] += choice["delta"]["content"];
    if (!choice["finish_reason"].is_null()) ++finishes;
  }
  EXPECT_EQ(text[0], c.greedy_text);
  EXPECT_EQ(text[1], c.greedy_text);
  EXPECT_EQ(finishes, 2);
  EXPECT_EQ(events.back(), "[DONE]");
  EXPECT_EQ(events[events.size() - 2]["usage"]["completion_tokens"], 2 * c.completion_tokens);
}

// llama-server's return_progress: streamed chunks with prompt_progress (and no choices)
// come before the answer's, which is the golden one; none without it.
TEST_F(ServerAnswersTest, ReturnProgressStreamsPromptProgressBeforeTheAnswer) {
  const TinyCase c = LoadTinyCase("02_one_image_jpeg");
  nlohmann::json body = c.request;
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  body["return_progress"] = true;
  const HttpResult r = Chat(body);
  ASSERT_EQ(r.status, 200) << r.body;
  const std::vector<nlohmann::json> events = SseEvents(r.body);
  ASSERT_GE(events.size(), 2u);
  std::string text;
  int reports = 0;
  for (const nlohmann::json& e : events) {
    if (e == "[DONE]") continue;
    if (e.contains("prompt_progress")) {
      EXPECT_TRUE(text.empty()) << "progress after the answer began";
      EXPECT_EQ(e["choices"], nlohmann::json::array());
      const nlohmann::json& p = e["prompt_progress"];
      EXPECT_EQ(p["total"], c.prompt_tokens);
      EXPECT_LT(p["processed"].get<int64_t>(), c.prompt_tokens);
      EXPECT_GE(p["vision"].get<double>(), 0.0);
      EXPECT_LE(p["vision"].get<double>(), 1.0);
      ++reports;
    } else if (!e["choices"].empty() && e["choices"][0]["delta"].contains("content")) {
      text += e["choices"][0]["delta"]["content"];
    }
  }
  EXPECT_GE(reports, 1);
  EXPECT_EQ(text, c.greedy_text);
  EXPECT_EQ(events[events.size() - 2]["usage"]["prompt_tokens"], c.prompt_tokens);

  body.erase("return_progress");
  const HttpResult plain = Chat(body);
  ASSERT_EQ(plain.status, 200) << plain.body;
  for (const nlohmann::json& e : SseEvents(plain.body)) {
    EXPECT_FALSE(e.is_object() && e.contains("prompt_progress"));
  }
  body["stream"] = false;
  body.erase("stream_options");
  body["return_progress"] = true;
  const HttpResult whole = Chat(body);
  ASSERT_EQ(whole.status, 200) << whole.body;
  EXPECT_EQ(whole.json["choices"][0]["message"]["content"], c.greedy_text);
}

// The same on /v1/completions, where llama-server takes it too: chunks of the text
// completion's shape with no choices. The raw prompt is the chat template's text of the
// fixture's conversation, so the answer is its golden one.
TEST_F(ServerAnswersTest, ReturnProgressOnTextCompletions) {
  const TinyCase c = LoadTinyCase("01_text_only");
  std::string prompt;
  for (const nlohmann::json& m : c.request["messages"]) {
    prompt += "<|im_start|>" + m["role"].get<std::string>() + "\n" +
              m["content"].get<std::string>() + "<|im_end|>\n";
  }
  prompt += "<|im_start|>assistant\n";
  nlohmann::json body = {{"model", c.request["model"]},
                         {"prompt", prompt},
                         {"max_tokens", c.request["max_tokens"]},
                         {"temperature", 0},
                         {"stream", true},
                         {"stream_options", {{"include_usage", true}}},
                         {"return_progress", true}};
  const HttpResult r = Post("/v1/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  std::string text;
  int reports = 0;
  const std::vector<nlohmann::json> events = SseEvents(r.body);
  ASSERT_GE(events.size(), 2u);
  for (const nlohmann::json& e : events) {
    if (e == "[DONE]") continue;
    EXPECT_EQ(e["object"], "text_completion");
    if (e.contains("prompt_progress")) {
      EXPECT_TRUE(text.empty()) << "progress after the answer began";
      EXPECT_EQ(e["choices"], nlohmann::json::array());
      EXPECT_EQ(e["prompt_progress"]["total"], c.prompt_tokens);
      EXPECT_LT(e["prompt_progress"]["processed"].get<int64_t>(), c.prompt_tokens);
      EXPECT_EQ(e["prompt_progress"]["vision"], 1.0);
      ++reports;
    } else if (!e["choices"].empty()) {
      text += e["choices"][0]["text"];
    }
  }
  EXPECT_GE(reports, 1);
  EXPECT_EQ(text, c.greedy_text);
  EXPECT_EQ(events[events.size() - 2]["usage"]["prompt_tokens"], c.prompt_tokens);

  body.erase("return_progress");
  const HttpResult plain = Post("/v1/completions", body);
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_EQ(plain.body.find("prompt_progress"), std::string::npos);
  body["stream"] = false;
  body.erase("stream_options");
  body["return_progress"] = true;
  const HttpResult whole = Post("/v1/completions", body);
  ASSERT_EQ(whole.status, 200) << whole.body;
  EXPECT_EQ(whole.json["choices"][0]["text"], c.greedy_text);
  EXPECT_FALSE(whole.json.contains("prompt_progress"));
  body["return_progress"] = "yes";
  const HttpResult wrong = Post("/v1/completions", body);
  EXPECT_EQ(wrong.status, 400) << wrong.body;
  EXPECT_EQ(wrong.json["error"]["param"], "return_progress") << wrong.body;
}

TEST_F(ServerAnswersTest, LogitBiasForcesAToken) {
  const Tokenizer tokenizer = Tokenizer::FromFile(ModelDir() + "/tokenizer.json");
  const int32_t token = tokenizer.Encode(" zebra")[0];
  nlohmann::json body = LoadTinyCase("01_text_only").request;
  body["max_tokens"] = 3;
  body["ignore_eos"] = true;
  body["logit_bias"] = {{std::to_string(token), 100}};
  const HttpResult r = Chat(body);
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string piece(tokenizer.TokenBytes(token));
  EXPECT_EQ(r.json["choices"][0]["message"]["content"], piece + piece + piece);
}

TEST_F(ServerAnswersTest, RefusalsNameTheField) {
  nlohmann::json body = LoadTinyCase("01_text_only").request;
  body["n"] = 9;  // the harness generates 8 at once
  HttpResult r = Chat(body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.json["error"]["param"], "n");
  body["n"] = 1;
  body["logit_bias"] = {{"999999", 1}};
  r = Chat(body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.json["error"]["param"], "logit_bias.999999");
}

// The tools go into the system turn exactly as the template's tojson writes them: the
// prompt has as many tokens as the reference rendering.
TEST_F(ServerAnswersTest, ToolsAreRenderedIntoThePrompt) {
  const std::string tool =
      R"({"type": "function", "function": {"name": "get_weather", "description": "Weather now", )"
      R"("parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}})";
  const std::string body = R"({"model": "qwen3-vl", "max_tokens": 2, "temperature": 0,
      "messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [)" +
                           tool + "]}";
  const HttpResult r = PostJson(*harness_, "/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  ChatMessage user;
  user.role = "user";
  user.content_is_string = true;
  user.parts.push_back({ChatPart::Kind::kText, "Weather in Paris?"});
  const std::vector<std::string> tools = {tool};
  const Tokenizer tokenizer = Tokenizer::FromFile(ModelDir() + "/tokenizer.json");
  const std::string rendered = RenderChatTemplate({user}, true, tools);
  EXPECT_NE(rendered.find("<tools>\n" + tool + "\n</tools>"), std::string::npos);
  EXPECT_EQ(r.json["usage"]["prompt_tokens"], tokenizer.Encode(rendered).size());
}

}  // namespace
}  // namespace qvl::testing
