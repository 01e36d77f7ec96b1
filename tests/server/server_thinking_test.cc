// A Qwen3-VL Thinking model over HTTP: the tiny fixture model with the Thinking chat
// template (tests/data/qwen3vl-thinking) in place of its Instruct one. Its random
// weights never write "</think>" by themselves, so the tests force it with logit_bias
// where they need a reply after the reasoning.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "engine/request_preparer.h"
#include "model/model_folder_for_test.h"
#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

constexpr int kThinkEnd = 151668;  // "</think>" in the Qwen3-VL vocabulary

class ServerThinkingTest : public ::testing::Test {
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
  body["logit_bias"] = {{std::to_string(kThinkEnd), 100}};
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

TEST_F(ServerThinkingTest, WhatCannotBeHonouredIsA400) {
  nlohmann::json body = Question(2);
  body["response_format"] = {{"type", "json_object"}};
  const HttpResult r = Post("/v1/chat/completions", body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.json["error"]["message"].get<std::string>().find(
                "is not supported by this model: it is a Qwen3-VL Thinking model"),
            std::string::npos)
      << r.body;

  const HttpResult o =
      Post("/api/chat", {{"model", "qwen3-vl"}, {"messages", body["messages"]}, {"think", false}});
  EXPECT_EQ(o.status, 400) << o.body;
  EXPECT_NE(o.body.find("this model always thinks"), std::string::npos) << o.body;
}

}  // namespace
}  // namespace qvl::testing
