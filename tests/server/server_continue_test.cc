// vLLM's continue_final_message over HTTP with the tiny model: an answer cut off at
// max_tokens is sent back as the final assistant message and continued where it stopped,
// the response holding only the new text.
#include <gtest/gtest.h>

#include <string>

#include "chat_question.h"
#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

// A question long enough that its prompt fills whole KV pages (16 tokens), which the
// prefix cache shares. Its greedy answer, in the tiny model's random words, is one whose
// text the tokenizer reads back as the same tokens: an answer whose tokens merge when it
// comes back as text ("WeaponsWeapons" is one token) cannot be continued the same, by
// qvl or by vLLM, and the test's count of prompt tokens would say so.
nlohmann::json LongQuestion(int max_tokens) {
  nlohmann::json body = Question(max_tokens);
  body["messages"] = {{{"role", "system"},
                       {"content",
                        "You are a patient teacher. Explain each step of the physics in plain "
                        "words for a curious child."}},
                      {{"role", "user"}, {"content", "Describe a cat."}}};
  return body;
}

// `question` with `answer` as the final assistant message, to be continued.
nlohmann::json Continuation(nlohmann::json question, const std::string& answer) {
  question["messages"].push_back({{"role", "assistant"}, {"content", answer}});
  question["continue_final_message"] = true;
  return question;
}

using ServerContinueTest = SharedServerTest;

// Greedy: an answer cut at N tokens and continued for N more is the answer of 2N tokens,
// so the prompt is the first one with the cut answer after it, left open.
TEST_F(ServerContinueTest, ACutOffAnswerContinuesWhereItStopped) {
  constexpr int kN = 8;
  const HttpResult cut = Chat(LongQuestion(kN));
  ASSERT_EQ(cut.status, 200) << cut.body;
  ASSERT_EQ(cut.json["choices"][0]["finish_reason"], "length") << cut.body;
  const std::string first = Content(cut);

  nlohmann::json continuation = Continuation(LongQuestion(kN), first);
  continuation["add_generation_prompt"] = false;
  const HttpResult continued = Chat(continuation);
  ASSERT_EQ(continued.status, 200) << continued.body;
  const HttpResult whole = Chat(LongQuestion(2 * kN));
  ASSERT_EQ(whole.status, 200) << whole.body;
  EXPECT_EQ(first + Content(continued), Content(whole));
  EXPECT_EQ(continued.json["usage"]["completion_tokens"], kN);
  EXPECT_EQ(continued.json["choices"][0]["message"]["role"], "assistant");

  // The continued prompt extends the first one: its KV pages are reused.
  const nlohmann::json& usage = continued.json["usage"];
  EXPECT_EQ(usage["prompt_tokens"].get<int>(), cut.json["usage"]["prompt_tokens"].get<int>() + kN);
  EXPECT_GE(usage["prompt_tokens_details"]["cached_tokens"].get<int>(), 16) << continued.body;

  // /tokenize counts the same prompt.
  const HttpResult counted = Post("/tokenize", Continuation(LongQuestion(kN), first));
  ASSERT_EQ(counted.status, 200) << counted.body;
  EXPECT_EQ(counted.json["count"], usage["prompt_tokens"]);

  // Streamed, the deltas hold the same continuation.
  nlohmann::json streamed = Continuation(LongQuestion(kN), first);
  streamed["stream"] = true;
  const HttpResult stream = Chat(streamed);
  ASSERT_EQ(stream.status, 200) << stream.body;
  EXPECT_EQ(StreamedText(SseEvents(stream.body)), Content(continued));
}

// Ollama continues a final assistant message by itself (its prefill), the same way.
TEST_F(ServerContinueTest, OllamaChatContinuesAFinalAssistantMessage) {
  constexpr int kN = 8;
  auto ollama = [](int max_tokens) {
    return nlohmann::json{{"model", "qwen3-vl"},
                          {"messages", LongQuestion(max_tokens)["messages"]},
                          {"stream", false},
                          {"options", {{"num_predict", max_tokens}, {"temperature", 0}}}};
  };
  const HttpResult cut = Post("/api/chat", ollama(kN));
  ASSERT_EQ(cut.status, 200) << cut.body;
  ASSERT_EQ(cut.json["done_reason"], "length") << cut.body;
  const std::string first = cut.json["message"]["content"];
  nlohmann::json continuation = ollama(kN);
  continuation["messages"].push_back({{"role", "assistant"}, {"content", first}});
  const HttpResult continued = Post("/api/chat", continuation);
  ASSERT_EQ(continued.status, 200) << continued.body;
  const HttpResult whole = Post("/api/chat", ollama(2 * kN));
  ASSERT_EQ(whole.status, 200) << whole.body;
  EXPECT_EQ(first + continued.json["message"]["content"].get<std::string>(),
            whole.json["message"]["content"]);
  EXPECT_EQ(continued.json["prompt_eval_count"].get<int>(),
            cut.json["prompt_eval_count"].get<int>() + kN);
}

TEST_F(ServerContinueTest, WhatCannotBeContinuedIsA400NamingTheField) {
  const std::string field = "continue_final_message";
  ExpectRefused(Chat, {
                          {{{field, true}},
                           field,
                           "continue_final_message: the last message, messages[0], is a user "
                           "one; only an assistant message can be continued"},
                      });
  const std::string no_content =
      "continue_final_message: messages[1] has no content: there is nothing to continue";
  const HttpResult empty = Chat(Continuation(Question(2), ""));
  EXPECT_EQ(empty.status, 400) << empty.body;
  EXPECT_EQ(empty.json["error"]["param"], field);
  EXPECT_EQ(empty.json["error"]["message"], no_content);

  nlohmann::json both = Continuation(Question(2), "The sky");
  both["add_generation_prompt"] = true;
  const HttpResult refused = Chat(both);
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_EQ(refused.json["error"]["param"], field);
  EXPECT_EQ(refused.json["error"]["message"],
            "continue_final_message: cannot be combined with add_generation_prompt true (the "
            "final message is continued, no new turn is opened); leave add_generation_prompt "
            "out or set it to false");
  const HttpResult counted = Post("/tokenize", both);
  EXPECT_EQ(counted.status, 400) << counted.body;
  EXPECT_EQ(counted.json["error"]["param"], field);
}

class ServerContinueThinkingTest : public SuiteServerTest<TinyThinkingModel> {};

// The Thinking template closes the final message's reasoning ("<think>\n\n</think>\n\n"
// before its content), so what the model writes is reply: all of it is content, exactly
// what the same prompt gives as a raw completion.
TEST_F(ServerContinueThinkingTest, TheContinuationIsReplyNotReasoning) {
  constexpr int kN = 4;
  const HttpResult continued = Chat(Continuation(Question(kN), "The sky"));
  ASSERT_EQ(continued.status, 200) << continued.body;
  const nlohmann::json& message = continued.json["choices"][0]["message"];
  const std::string prompt =
      "<|im_start|>user\nWhy is the sky blue?<|im_end|>\n<|im_start|>assistant\n<think>\n\n"
      "</think>\n\nThe sky";
  const HttpResult raw =
      Post("/v1/completions", {{"prompt", prompt}, {"max_tokens", kN}, {"temperature", 0}});
  ASSERT_EQ(raw.status, 200) << raw.body;
  EXPECT_EQ(message["content"], raw.json["choices"][0]["text"]) << continued.body;
  EXPECT_FALSE(message.contains("reasoning_content")) << continued.body;
  EXPECT_FALSE(continued.json["usage"].contains("completion_tokens_details")) << continued.body;
  EXPECT_EQ(continued.json["usage"]["prompt_tokens"], raw.json["usage"]["prompt_tokens"]);

  // Reasoning before a "</think>" not in the template's form would be rewritten.
  const HttpResult rewritten = Chat(Continuation(Question(kN), "Light scatters.</think>The sky"));
  EXPECT_EQ(rewritten.status, 400) << rewritten.body;
  EXPECT_EQ(rewritten.json["error"]["param"], "continue_final_message");
}

}  // namespace
}  // namespace qvl::testing
