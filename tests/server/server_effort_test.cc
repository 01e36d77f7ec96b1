// Reasoning effort levels over HTTP on the tiny Thinking model, whose reasoning never ends
// by itself, served with a thinking budget of its own (--thinking-budget): a level is the
// request's budget (server/reasoning_effort.h), so it wins over the server's, and "none"
// ends the reasoning at once.
#include <gtest/gtest.h>

#include <string>

#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

constexpr int kServerBudget = 2;

class ServerEffortTest : public SuiteServerTest<TinyThinkingModel> {
 protected:
  static void SetUpTestSuite() {
    HarnessOptions options = DefaultHarnessOptions();
    options.model_dir = TinyThinkingModel();
    options.engine.default_reasoning_budget = kServerBudget;
    harness_ = new ServerHarness(options);
  }

  static nlohmann::json Question(int max_tokens) {
    return {{"messages", {{{"role", "user"}, {"content", "Why is the sky blue?"}}}},
            {"max_tokens", max_tokens},
            {"temperature", 0}};
  }
};

int ReasoningTokens(const HttpResult& r) {
  return r.json["usage"]["completion_tokens_details"]["reasoning_tokens"];
}

// Without a level the server's budget ends the reasoning ("</think>" counted); "none" is
// no reasoning; "minimal" (256) lets it run past the server's budget to max_tokens.
TEST_F(ServerEffortTest, ChatsReasoningEffortIsTheBudget) {
  nlohmann::json body = Question(6);
  const HttpResult server = Chat(body);
  ASSERT_EQ(server.status, 200) << server.body;
  EXPECT_EQ(ReasoningTokens(server), kServerBudget + 1);

  body["reasoning_effort"] = "none";
  const HttpResult none = Chat(body);
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_EQ(none.json["choices"][0]["message"]["reasoning_content"], "") << none.body;
  EXPECT_EQ(ReasoningTokens(none), 1);
  EXPECT_EQ(none.json["usage"]["completion_tokens"], 6);

  body["reasoning_effort"] = "minimal";
  const HttpResult minimal = Chat(body);
  ASSERT_EQ(minimal.status, 200) << minimal.body;
  EXPECT_EQ(minimal.json["choices"][0]["message"]["content"], "");
  EXPECT_EQ(ReasoningTokens(minimal), 6);

  // A budget in tokens wins over the level.
  body["thinking_token_budget"] = 3;
  EXPECT_EQ(ReasoningTokens(Chat(body)), 4);

  body["reasoning_effort"] = "max";
  const HttpResult bad = Chat(body);
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.json["error"]["param"], "reasoning_effort") << bad.body;
}

// The Responses API's reasoning.effort, echoed as the level in force.
TEST_F(ServerEffortTest, ResponsesReasoningEffortIsTheBudget) {
  nlohmann::json body = {{"input", "Why is the sky blue?"},
                         {"max_output_tokens", 6},
                         {"temperature", 0},
                         {"reasoning", {{"effort", "none"}}}};
  const HttpResult none = Post("/v1/responses", body);
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_EQ(none.json["usage"]["output_tokens_details"]["reasoning_tokens"], 1) << none.body;
  EXPECT_EQ(none.json["reasoning"]["effort"], "none");

  // low (1024 tokens), not the server's budget: the reasoning runs to the answer's end.
  body["reasoning"]["effort"] = "low";
  const HttpResult low = Post("/v1/responses", body);
  ASSERT_EQ(low.status, 200) << low.body;
  EXPECT_EQ(low.json["usage"]["output_tokens_details"]["reasoning_tokens"], 6) << low.body;

  body["reasoning"]["effort"] = "extreme";
  const HttpResult bad = Post("/v1/responses", body);
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.json["error"]["param"], "reasoning.effort") << bad.body;
}

// Ollama's think: true leaves the budget to the server, a level is the request's own, on
// /api/chat and /api/generate alike; a level Ollama does not have is a 400.
TEST_F(ServerEffortTest, OllamasThinkLevelIsTheBudget) {
  nlohmann::json chat = {{"model", "qwen3-vl"},
                         {"messages", Question(6)["messages"]},
                         {"stream", false},
                         {"think", true},
                         {"options", {{"num_predict", 6}, {"temperature", 0}}}};
  const HttpResult server = Post("/api/chat", chat);
  ASSERT_EQ(server.status, 200) << server.body;
  const std::string cut = server.json["message"]["thinking"];

  chat["think"] = "low";
  const HttpResult low = Post("/api/chat", chat);
  ASSERT_EQ(low.status, 200) << low.body;
  const std::string thinking = low.json["message"]["thinking"];
  EXPECT_GT(thinking.size(), cut.size()) << low.body;
  EXPECT_EQ(thinking.rfind(cut, 0), 0u) << low.body;
  EXPECT_EQ(low.json["message"]["content"], "");
  EXPECT_EQ(low.json["done_reason"], "length");

  nlohmann::json generate = {{"model", "qwen3-vl"},
                             {"prompt", "Why is the sky blue?"},
                             {"stream", false},
                             {"think", "medium"},
                             {"options", {{"num_predict", 6}, {"temperature", 0}}}};
  const HttpResult medium = Post("/api/generate", generate);
  ASSERT_EQ(medium.status, 200) << medium.body;
  EXPECT_EQ(medium.json["thinking"], thinking);
  EXPECT_EQ(medium.json["response"], "");

  chat["think"] = "minimal";
  const HttpResult bad = Post("/api/chat", chat);
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.json["error"], "think: \"minimal\" is not one of true, false, low, medium, high")
      << bad.body;
}

}  // namespace
}  // namespace qvl::testing
