// Ollama's API over HTTP on 127.0.0.1 with the tiny fixture model: /api/chat and
// /api/generate give the golden answers as newline-delimited JSON or one object, the
// model listings describe the served model, and every error is Ollama's {"error": "..."}.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

class ServerOllamaTest : public SharedServerTest {
 protected:
  static void ExpectOllamaError(const HttpResult& r, int status, const std::string& starts) {
    EXPECT_EQ(r.status, status) << r.body;
    ASSERT_TRUE(r.json.is_object()) << r.body;
    ASSERT_TRUE(r.json["error"].is_string()) << r.body;
    EXPECT_EQ(r.json["error"].get<std::string>().rfind(starts, 0), 0u) << r.body;
    EXPECT_EQ(r.json.size(), 1u) << r.body;
  }
};

// The fixture's one-image case as an Ollama chat request (the image before the text).
nlohmann::json ImageChat(const TinyCase& c) {
  const nlohmann::json& parts = c.request["messages"][0]["content"];
  std::string url = parts[0]["image_url"]["url"];
  return {{"model", "qwen3-vl"},
          {"messages",
           {{{"role", "user"},
             {"content", parts[1]["text"]},
             {"images", {url.substr(url.find(',') + 1)}}}}},
          {"options", {{"num_predict", 16}, {"temperature", 0}}}};
}

std::vector<nlohmann::json> Lines(const std::string& body) {
  std::vector<nlohmann::json> lines;
  size_t at = 0;
  while (at < body.size()) {
    const size_t end = body.find('\n', at);
    EXPECT_NE(end, std::string::npos) << "a line without its newline";
    if (end == std::string::npos) break;
    lines.push_back(nlohmann::json::parse(body.substr(at, end - at), nullptr, false));
    at = end + 1;
  }
  return lines;
}

TEST_F(ServerOllamaTest, ChatGivesTheGoldenAnswerStreamedAndNot) {
  const TinyCase c = LoadTinyCase("02_one_image_jpeg");
  nlohmann::json body = ImageChat(c);
  body["stream"] = false;
  const HttpResult whole = Post("/api/chat", body);
  ASSERT_EQ(whole.status, 200) << whole.body;
  EXPECT_EQ(whole.content_type, "application/json");
  EXPECT_EQ(whole.json["message"]["content"], c.greedy_text);
  EXPECT_EQ(whole.json["done"], true);
  EXPECT_EQ(whole.json["done_reason"], "length");
  EXPECT_EQ(whole.json["prompt_eval_count"], c.prompt_tokens);
  EXPECT_EQ(whole.json["eval_count"], 16);

  body.erase("stream");  // Ollama streams by default
  const HttpResult streamed = Post("/api/chat", body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  EXPECT_EQ(streamed.content_type, "application/x-ndjson");
  const std::vector<nlohmann::json> lines = Lines(streamed.body);
  ASSERT_GE(lines.size(), 2u);
  std::string text;
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["done"], i + 1 == lines.size()) << i;
    EXPECT_EQ(lines[i]["model"], "qwen3-vl");
    text += lines[i]["message"]["content"].get<std::string>();
  }
  EXPECT_EQ(text, c.greedy_text);
  EXPECT_EQ(lines.back()["prompt_eval_count"], c.prompt_tokens);
}

TEST_F(ServerOllamaTest, GenerateWithAnImageGivesTheChatAnswer) {
  const TinyCase c = LoadTinyCase("02_one_image_jpeg");
  const nlohmann::json chat = ImageChat(c);
  const HttpResult r = Post("/api/generate", {{"model", "qwen3-vl:latest"},
                                              {"prompt", chat["messages"][0]["content"]},
                                              {"images", chat["messages"][0]["images"]},
                                              {"options", chat["options"]},
                                              {"stream", false}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["response"], c.greedy_text);
  EXPECT_EQ(r.json["prompt_eval_count"], c.prompt_tokens);
}

// Ollama's logprobs: every answer token with its logprob and alternatives, those the
// OpenAI route gives for the same raw prompt, streamed (each token once, beside its text)
// and not.
TEST_F(ServerOllamaTest, LogprobsAreTheAnswersTokens) {
  const nlohmann::json openai =
      Post("/v1/completions",
           {{"prompt", "The sky is"}, {"max_tokens", 6}, {"temperature", 0}, {"logprobs", 2}})
          .json["choices"][0]["logprobs"];
  ASSERT_EQ(openai["tokens"].size(), 6u) << openai.dump();
  nlohmann::json body = {
      {"model", "qwen3-vl"}, {"prompt", "The sky is"},
      {"raw", true},         {"logprobs", true},
      {"top_logprobs", 2},   {"options", {{"num_predict", 6}, {"temperature", 0}}},
      {"stream", false}};
  const HttpResult whole = Post("/api/generate", body);
  ASSERT_EQ(whole.status, 200) << whole.body;
  const nlohmann::json& entries = whole.json["logprobs"];
  ASSERT_EQ(entries.size(), 6u) << whole.body;
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(entries[i]["token"], openai["tokens"][i]);
    EXPECT_EQ(entries[i]["logprob"], openai["token_logprobs"][i]);
    ASSERT_EQ(entries[i]["top_logprobs"].size(), 2u);
    for (const nlohmann::json& alternative : entries[i]["top_logprobs"]) {
      EXPECT_EQ(openai["top_logprobs"][i][alternative["token"].get<std::string>()],
                alternative["logprob"]);
    }
  }

  body.erase("stream");
  const HttpResult streamed = Post("/api/generate", body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  nlohmann::json tokens = nlohmann::json::array();
  for (const nlohmann::json& line : Lines(streamed.body)) {
    for (const nlohmann::json& entry : line.value("logprobs", nlohmann::json::array())) {
      tokens.push_back(entry);
    }
  }
  EXPECT_EQ(tokens, entries);

  body["logprobs"] = false;
  body["stream"] = false;
  EXPECT_FALSE(Post("/api/generate", body).json.contains("logprobs"));
}

TEST_F(ServerOllamaTest, ListingsDescribeTheServedModel) {
  const HttpResult tags = Get(*harness_, "/api/tags");
  ASSERT_EQ(tags.status, 200) << tags.body;
  ASSERT_EQ(tags.json["models"].size(), 2u);
  EXPECT_EQ(tags.json["models"][0]["name"], "tiny-qwen3vl");
  EXPECT_EQ(tags.json["models"][1]["name"], "qwen3-vl");
  EXPECT_GT(tags.json["models"][0]["size"].get<int64_t>(), 0);
  EXPECT_EQ(Get(*harness_, "/api/ps").json["models"].size(), 2u);
  const HttpResult show = Post("/api/show", {{"model", "qwen3-vl"}});
  ASSERT_EQ(show.status, 200) << show.body;
  EXPECT_NE(show.json["template"].get<std::string>().find("<|im_start|>"), std::string::npos);
  EXPECT_EQ(show.json["capabilities"], (nlohmann::json{"completion", "vision", "tools"}));
  // In --dtype's words (the harness runs the checkpoint's own weights in float32), where
  // it said the internal format's name.
  EXPECT_EQ(show.json["details"]["quantization_level"], "F32");
  EXPECT_TRUE(Get(*harness_, "/api/version").json["version"].is_string());
}

TEST_F(ServerOllamaTest, ALoadRequestAnswersDoneWithReasonLoad) {
  const HttpResult generate = Post("/api/generate", {{"model", "qwen3-vl"}, {"stream", false}});
  EXPECT_EQ(generate.status, 200) << generate.body;
  EXPECT_EQ(generate.json["response"], "") << generate.body;
  EXPECT_EQ(generate.json["done"], true);
  EXPECT_EQ(generate.json["done_reason"], "load");
  EXPECT_EQ(generate.json["model"], "qwen3-vl");
  const HttpResult chat =
      Post("/api/chat", {{"model", "qwen3-vl"}, {"messages", nlohmann::json::array()}});
  EXPECT_EQ(chat.status, 200) << chat.body;
  ASSERT_EQ(chat.body.back(), '\n');  // streamed by default: one NDJSON line
  const nlohmann::json line = nlohmann::json::parse(chat.body);
  EXPECT_EQ(line["message"], nlohmann::json({{"role", "assistant"}, {"content", ""}}));
  EXPECT_EQ(line["done_reason"], "load");
}

TEST_F(ServerOllamaTest, ErrorsAreOllamasShape) {
  const nlohmann::json hi = {{"model", "qwen3-vl"},
                             {"messages", {{{"role", "user"}, {"content", "hi"}}}},
                             {"stream", false}};
  nlohmann::json body = hi;
  body["model"] = "llama3";
  ExpectOllamaError(Post("/api/chat", body), 404, "model: ");
  body = hi;
  body["options"] = {{"temperature", 9}};
  ExpectOllamaError(Post("/api/chat", body), 400, "options.temperature: ");
  body = hi;
  body["messages"][0]["images"] = {"bm90IGFuIGltYWdl"};
  ExpectOllamaError(Post("/api/chat", body), 400, "messages[0].images[0]");
  std::string long_prompt;
  for (int i = 0; i < 5000; ++i) long_prompt += "hello ";
  ExpectOllamaError(
      Post("/api/generate", {{"model", "qwen3-vl"}, {"prompt", long_prompt}, {"stream", false}}),
      400, "prompt: ");
  ExpectOllamaError(Post("/api/show", {{"model", "llama3"}}), 404, "model: ");
  ExpectOllamaError(PostJson(*harness_, "/api/chat", "{not json"), 400, "");
  ExpectOllamaError(PostJson(*harness_, "/api/pull", R"({"model": "llama3"})"), 404,
                    "no route POST /api/pull");
  ExpectOllamaError(Get(*harness_, "/api/chat"), 405, "GET /api/chat is not allowed");
}

TEST(ServerOllamaAuthTest, TheApiKeyGuardsTheOllamaRoutesToo) {
  HarnessOptions options = DefaultHarnessOptions();
  options.server.api_key = "s3cret-key";
  ServerHarness harness(options);
  for (const HttpResult& r :
       {PostJson(harness, "/api/chat", R"({"model": "qwen3-vl", "messages": []})"),
        PostJson(harness, "/api/show", R"({"model": "qwen3-vl"})"), Get(harness, "/api/tags")}) {
    EXPECT_EQ(r.status, 401) << r.body;
    EXPECT_TRUE(r.json["error"].is_string()) << r.body;
  }
  EXPECT_EQ(Get(harness, "/api/tags", {{"Authorization", "Bearer s3cret-key"}}).status, 200);
}

}  // namespace
}  // namespace qvl::testing
