// A Qwen3-VL Thinking model over HTTP: the tiny fixture model with the Thinking chat
// template (tests/data/qwen3vl-thinking) in place of its Instruct one. Its random
// weights never write "</think>" by themselves, so the tests force it with logit_bias
// where they need a reply after the reasoning (a grammar then masks the tag again).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "engine/request_preparer.h"
#include "grammar/schema_validator_for_test.h"
#include "model/model_folder_for_test.h"
#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

class ServerThinkingTest : public ::testing::Test {
 public:
  // "</think>" as the served model's tokenizer spells it.
  static int ThinkEnd() { return harness_->engine()->tokenizer().TokenToId("</think>"); }

 protected:
  static void SetUpTestSuite() {
    HarnessOptions options = DefaultHarnessOptions();
    options.model_dir = ModelFolderWith(
        ModelDir(), "chat_template.json",
        ReadFileToString(std::string(QVL_TEST_DATA) + "/qwen3vl-thinking/chat_template.json"));
    harness_ = new ServerHarness(options);
  }
  static void TearDownTestSuite() {
    delete harness_;
    harness_ = nullptr;
  }
  static HttpResult Post(const std::string& path, const nlohmann::json& body) {
    return PostJson(*harness_, path, body.dump());
  }
  static nlohmann::json Question(int max_tokens) {
    return {{"messages", {{{"role", "user"}, {"content", "Why is the sky blue?"}}}},
            {"max_tokens", max_tokens}};
  }

  static inline ServerHarness* harness_ = nullptr;
};

TEST_F(ServerThinkingTest, TheFolderIsServedWithTheThinkingTemplate) {
  EXPECT_EQ(harness_->engine()->preparer().chat_template(), ChatTemplateKind::kThinking);
}

// Cut off by max_tokens before "</think>": all of it is reasoning, and counted so.
TEST_F(ServerThinkingTest, AnAnswerCutOffWhileItReasonsIsAllReasoning) {
  const HttpResult r = Post("/v1/chat/completions", Question(4));
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json& message = r.json["choices"][0]["message"];
  EXPECT_EQ(message["content"], "");
  EXPECT_TRUE(message["reasoning_content"].is_string()) << r.body;
  EXPECT_EQ(r.json["usage"]["completion_tokens"], 4);
  EXPECT_EQ(r.json["usage"]["completion_tokens_details"]["reasoning_tokens"], 4);
}

// "</think>" first: no reasoning; only the first tag ends it, so the rest is the reply.
TEST_F(ServerThinkingTest, TheReplyIsWhatFollowsTheTag) {
  nlohmann::json body = Question(3);
  body["logit_bias"] = {{std::to_string(ServerThinkingTest::ThinkEnd()), 100}};
  const HttpResult r = Post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["choices"][0]["message"]["reasoning_content"], "");
  EXPECT_EQ(r.json["choices"][0]["message"]["content"], "</think></think>");
  EXPECT_EQ(r.json["usage"]["completion_tokens_details"]["reasoning_tokens"], 1);

  body["stream"] = true;
  const HttpResult streamed = Post("/v1/chat/completions", body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  EXPECT_EQ(StreamedText(SseEvents(streamed.body)), "</think></think>");
}

TEST_F(ServerThinkingTest, OllamaAndResponsesGiveTheReasoningTheirWay) {
  const nlohmann::json messages = Question(2)["messages"];
  const HttpResult o = Post("/api/chat", {{"model", "qwen3-vl"},
                                          {"messages", messages},
                                          {"stream", false},
                                          {"options", {{"num_predict", 2}}}});
  ASSERT_EQ(o.status, 200) << o.body;
  EXPECT_TRUE(o.json["message"]["thinking"].is_string()) << o.body;
  EXPECT_EQ(o.json["message"]["content"], "");

  const HttpResult r =
      Post("/v1/responses", {{"input", "Why is the sky blue?"}, {"max_output_tokens", 2}});
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(r.json["output"].size(), 1u) << r.body;
  EXPECT_EQ(r.json["output"][0]["type"], "reasoning");
  EXPECT_EQ(r.json["usage"]["output_tokens_details"]["reasoning_tokens"], 2);
}

// The template always opens the reasoning: there is no answer without it.
TEST_F(ServerThinkingTest, OllamasThinkFalseIsA400) {
  const HttpResult o =
      Post("/api/chat",
           {{"model", "qwen3-vl"}, {"messages", Question(2)["messages"]}, {"think", false}});
  EXPECT_EQ(o.status, 400) << o.body;
  EXPECT_NE(o.body.find("this model always thinks"), std::string::npos) << o.body;
}

// Ollama's clients (Open WebUI, the ollama CLI) offer thinking where /api/show lists it.
TEST_F(ServerThinkingTest, OllamasShowListsTheThinkingCapability) {
  const HttpResult show = Post("/api/show", {{"model", "qwen3-vl"}});
  ASSERT_EQ(show.status, 200) << show.body;
  EXPECT_EQ(show.json["capabilities"],
            (nlohmann::json{"completion", "vision", "tools", "thinking"}));
}

const grammar_test::Json kVerdict = grammar_test::Json::parse(R"({
  "type": "object", "additionalProperties": false, "required": ["answer", "score"],
  "properties": {"answer": {"type": "string", "maxLength": 8}, "score": {"type": "integer"}}})");

// Ends the reasoning at once; the grammar binds what follows, so the tag comes once.
// Greedy, so that the streamed answer is the same.
nlohmann::json EndingTheReasoning(nlohmann::json body) {
  body["logit_bias"] = {{std::to_string(ServerThinkingTest::ThinkEnd()), 100}};
  body["temperature"] = 0;
  return body;
}

// The schema binds the reply after "</think>", as vLLM applies it after the reasoning.
TEST_F(ServerThinkingTest, AJsonSchemaBindsTheReplyAfterTheReasoning) {
  nlohmann::json body = EndingTheReasoning(Question(64));
  body["response_format"] = {{"type", "json_schema"},
                             {"json_schema", {{"name", "verdict"}, {"schema", kVerdict}}}};
  const HttpResult r = Post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json& message = r.json["choices"][0]["message"];
  EXPECT_EQ(message["reasoning_content"], "") << r.body;
  EXPECT_EQ(r.json["usage"]["completion_tokens_details"]["reasoning_tokens"], 1);
  EXPECT_EQ(r.json["choices"][0]["finish_reason"], "stop") << r.body;
  const std::string content = message["content"];
  const grammar_test::Json reply = grammar_test::Json::parse(content);
  EXPECT_TRUE(grammar_test::Validate(reply, kVerdict, kVerdict)) << content;

  body["stream"] = true;
  const HttpResult streamed = Post("/v1/chat/completions", body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  EXPECT_EQ(StreamedText(SseEvents(streamed.body)), content);
}

// Cut off by max_tokens while it reasons: no reply, as without a grammar.
TEST_F(ServerThinkingTest, AJsonObjectCutOffInTheReasoningIsAnEmptyReply) {
  nlohmann::json body = Question(4);
  body["response_format"] = {{"type", "json_object"}};
  const HttpResult r = Post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["choices"][0]["message"]["content"], "");
  EXPECT_TRUE(r.json["choices"][0]["message"]["reasoning_content"].is_string()) << r.body;
  EXPECT_EQ(r.json["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(r.json["usage"]["completion_tokens_details"]["reasoning_tokens"], 4);
}

TEST_F(ServerThinkingTest, ARequiredToolIsCalledAfterTheReasoning) {
  nlohmann::json body = EndingTheReasoning(Question(96));
  body["tools"] = {{{"type", "function"},
                    {"function",
                     {{"name", "get_weather"},
                      {"parameters",
                       {{"type", "object"},
                        {"additionalProperties", false},
                        {"required", {"city"}},
                        {"properties", {{"city", {{"type", "string"}, {"maxLength", 8}}}}}}}}}}};
  body["tool_choice"] = "required";
  const HttpResult r = Post("/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json& choice = r.json["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls") << r.body;
  EXPECT_EQ(choice["message"]["reasoning_content"], "") << r.body;
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u) << r.body;
  const nlohmann::json& function = choice["message"]["tool_calls"][0]["function"];
  EXPECT_EQ(function["name"], "get_weather");
  const std::string arguments = function["arguments"];
  const nlohmann::json parsed = nlohmann::json::parse(arguments);
  ASSERT_TRUE(parsed.is_object()) << arguments;
  EXPECT_EQ(parsed.size(), 1u) << arguments;
  EXPECT_TRUE(parsed["city"].is_string()) << arguments;

  body["stream"] = true;
  const HttpResult streamed = Post("/v1/chat/completions", body);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  std::string name, streamed_arguments, finish;
  for (const nlohmann::json& e : SseEvents(streamed.body)) {
    if (!e.is_object() || !e.contains("choices") || e["choices"].empty()) continue;
    const nlohmann::json& c = e["choices"][0];
    if (c["finish_reason"].is_string()) finish = c["finish_reason"];
    if (!c["delta"].contains("tool_calls")) continue;
    for (const nlohmann::json& call : c["delta"]["tool_calls"]) {
      if (call["function"].contains("name")) name += call["function"]["name"].get<std::string>();
      if (call["function"].contains("arguments")) {
        streamed_arguments += call["function"]["arguments"].get<std::string>();
      }
    }
  }
  EXPECT_EQ(name, "get_weather") << streamed.body;
  EXPECT_EQ(streamed_arguments, arguments) << streamed.body;
  EXPECT_EQ(finish, "tool_calls") << streamed.body;
}

}  // namespace
}  // namespace qvl::testing
