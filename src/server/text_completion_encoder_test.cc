#include "server/text_completion_encoder.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "server/encoder_updates_for_test.h"

namespace qvl {
namespace {

using ::qvl::testing::Events;
using ::qvl::testing::Progress;

CompletionIdentity Identity() { return {"cmpl-1", 1700000000, "qwen3-vl"}; }

// One token's update: `text` chosen with logprob -0.25, alternatives best first.
GenerationUpdate Token(const std::string& text, std::vector<TokenLogprob> top) {
  GenerationUpdate u;
  u.text = text;
  GeneratedToken t;
  t.chosen = {42, text, -0.25f};
  t.top = std::move(top);
  u.tokens.push_back(t);
  return u;
}

GenerationUpdate Final(FinishReason reason) {
  GenerationUpdate u;
  u.finished = true;
  u.finish_reason = reason;
  u.usage = {12, 2, 8, 0};
  u.timings.ttft_ms = 5;
  return u;
}

TEST(TextCompletionEncoderTest, OneTextCompletionObject) {
  TextCompletionEncoder encoder(Identity(), {});
  EXPECT_EQ(encoder.Start(), "");
  EXPECT_EQ(encoder.Encode(Token("Hel", {})), "");
  EXPECT_EQ(encoder.Encode(Token("lo", {})), "");
  const nlohmann::json c = nlohmann::json::parse(encoder.Encode(Final(FinishReason::kLength)));
  EXPECT_TRUE(encoder.finished());
  EXPECT_EQ(c["id"], "cmpl-1");
  EXPECT_EQ(c["object"], "text_completion");
  EXPECT_EQ(c["created"], 1700000000);
  EXPECT_EQ(c["model"], "qwen3-vl");
  ASSERT_EQ(c["choices"].size(), 1u);
  EXPECT_EQ(c["choices"][0], (nlohmann::json{{"text", "Hello"},
                                             {"index", 0},
                                             {"logprobs", nullptr},
                                             {"finish_reason", "length"},
                                             {"stop_reason", nullptr}}));
  EXPECT_EQ(c["usage"]["prompt_tokens"], 12);
  EXPECT_EQ(c["usage"]["completion_tokens"], 2);
  EXPECT_EQ(c["usage"]["total_tokens"], 14);
  EXPECT_EQ(c["timings"]["ttft_ms"], 5.0);
}

TEST(TextCompletionEncoderTest, LegacyLogprobs) {
  TextCompletionEncoder encoder(Identity(), {.logprobs = 1});
  // The chosen token is the best: one entry. Then a chosen token outside the best one:
  // it is added, as OpenAI does.
  encoder.Encode(Token("Hel", {{42, "Hel", -0.25f}, {7, "He", -2.0f}}));
  encoder.Encode(Token("lo", {{9, "p", -0.1f}, {42, "lo", -0.25f}}));
  const nlohmann::json c = nlohmann::json::parse(encoder.Encode(Final(FinishReason::kStop)));
  const nlohmann::json& l = c["choices"][0]["logprobs"];
  EXPECT_EQ(l["tokens"], (nlohmann::json{"Hel", "lo"}));
  EXPECT_EQ(l["token_logprobs"], (nlohmann::json{-0.25, -0.25}));
  EXPECT_EQ(l["top_logprobs"], (nlohmann::json{{{"Hel", -0.25}}, {{"p", -0.1f}, {"lo", -0.25}}}));
  EXPECT_EQ(l["text_offset"], (nlohmann::json{0, 3}));

  TextCompletionEncoder zero(Identity(), {.logprobs = 0});
  zero.Encode(Token("a", {{9, "b", -0.1f}}));
  const nlohmann::json z = nlohmann::json::parse(zero.Encode(Final(FinishReason::kStop)));
  EXPECT_EQ(z["choices"][0]["logprobs"]["top_logprobs"], (nlohmann::json{{{"a", -0.25}}}));
}

TEST(TextCompletionEncoderTest, StreamsChunksOfTheSameShape) {
  TextCompletionEncoder encoder(Identity(), {.stream = true, .include_usage = true, .logprobs = 0});
  std::string sse = encoder.Start();
  sse += encoder.Encode(Token("Hel", {}));
  sse += encoder.Encode(Token("lo", {}));
  EXPECT_FALSE(encoder.finished());
  sse += encoder.Encode(Final(FinishReason::kStop));
  EXPECT_TRUE(encoder.finished());
  const std::vector<nlohmann::json> e = Events(sse);
  ASSERT_EQ(e.size(), 5u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(e[i]["object"], "text_completion");
    EXPECT_EQ(e[i]["id"], "cmpl-1");
  }
  EXPECT_EQ(e[0]["choices"][0]["text"], "Hel");
  EXPECT_TRUE(e[0]["choices"][0]["finish_reason"].is_null());
  EXPECT_TRUE(e[0]["choices"][0]["stop_reason"].is_null());
  EXPECT_EQ(e[0]["choices"][0]["logprobs"]["text_offset"], (nlohmann::json{0}));
  EXPECT_EQ(e[1]["choices"][0]["text"], "lo");
  EXPECT_EQ(e[1]["choices"][0]["logprobs"]["text_offset"], (nlohmann::json{3}));
  EXPECT_EQ(e[2]["choices"][0]["text"], "");
  EXPECT_EQ(e[2]["choices"][0]["finish_reason"], "stop");
  EXPECT_TRUE(e[2]["usage"].is_null());
  EXPECT_EQ(e[2]["timings"]["ttft_ms"], 5.0);
  EXPECT_EQ(e[3]["choices"], nlohmann::json::array());
  EXPECT_EQ(e[3]["usage"]["prompt_tokens"], 12);
  EXPECT_EQ(e[4], "[DONE]");
}

// llama-server's return_progress: chunks of the same shape with no choices and a
// prompt_progress before the answer's; nothing without it, nothing when not streamed.
TEST(TextCompletionEncoderTest, StreamsPromptProgressOnlyWhenAsked) {
  TextCompletionEncoder encoder(Identity(), {.stream = true, .progress = true});
  std::string sse = encoder.Start();
  sse += encoder.Encode(Progress(16, 0.5));
  sse += encoder.Encode(Progress(48, 1.0));
  sse += encoder.Encode(Token("Hi", {}));
  sse += encoder.Encode(Final(FinishReason::kStop));
  const std::vector<nlohmann::json> e = Events(sse);
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0]["object"], "text_completion");
  EXPECT_EQ(e[0]["id"], "cmpl-1");
  EXPECT_EQ(e[0]["choices"], nlohmann::json::array());
  EXPECT_EQ(e[0]["prompt_progress"],
            nlohmann::json::parse(
                R"({"total": 80, "cache": 16, "processed": 16, "time_ms": 12.5, "vision": 0.5})"));
  EXPECT_EQ(e[1]["prompt_progress"]["processed"], 48);
  EXPECT_EQ(e[2]["choices"][0]["text"], "Hi");
  EXPECT_FALSE(e[2].contains("prompt_progress"));
  EXPECT_EQ(e[3]["choices"][0]["finish_reason"], "stop");

  TextCompletionEncoder unasked(Identity(), {.stream = true});
  EXPECT_EQ(unasked.Encode(Progress(16, 0.5)), "");
  TextCompletionEncoder whole(Identity(), {.progress = true});
  EXPECT_EQ(whole.Encode(Progress(16, 0.5)), "");
  whole.Encode(Token("Hi", {}));
  const nlohmann::json c = nlohmann::json::parse(whole.Encode(Final(FinishReason::kStop)));
  EXPECT_EQ(c["choices"][0]["text"], "Hi");
  EXPECT_FALSE(c.contains("prompt_progress"));
}

// vLLM's stop_reason: the stop string that ended the answer, else the stop token id.
TEST(TextCompletionEncoderTest, TheStopThatEndedTheAnswerIsTheStopReason) {
  GenerationUpdate by_string = Final(FinishReason::kStop);
  by_string.stop = "\n\n";
  GenerationUpdate by_token = Final(FinishReason::kStop);
  by_token.stop_token = 151643;
  const std::vector<std::pair<GenerationUpdate, nlohmann::json>> ends = {
      {by_string, "\n\n"}, {by_token, 151643}, {Final(FinishReason::kStop), nullptr}};
  for (const auto& [end, stop_reason] : ends) {
    TextCompletionEncoder plain(Identity(), {});
    const nlohmann::json c = nlohmann::json::parse(plain.Encode(GenerationUpdate(end)));
    EXPECT_EQ(c["choices"][0]["stop_reason"], stop_reason);
    TextCompletionEncoder streamed(Identity(), {.stream = true});
    const std::vector<nlohmann::json> e = Events(streamed.Encode(GenerationUpdate(end)));
    ASSERT_EQ(e.size(), 2u);
    EXPECT_EQ(e[0]["choices"][0]["finish_reason"], "stop");
    EXPECT_EQ(e[0]["choices"][0]["stop_reason"], stop_reason);
  }
}

TEST(TextCompletionEncoderTest, AnAnswerCutShortSaysWhy) {
  TextCompletionEncoder streamed(Identity(), {.stream = true});
  const std::vector<nlohmann::json> e = Events(streamed.Encode(Final(FinishReason::kCancelled)));
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0]["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(e[0]["error"]["message"], "the server shut down before the answer was complete");
  TextCompletionEncoder plain(Identity(), {});
  const nlohmann::json c = nlohmann::json::parse(plain.Encode(Final(FinishReason::kCancelled)));
  EXPECT_EQ(c["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(c["error"]["code"], "unavailable");
}

// Two prompts, two answers each: choice i * 2 + j is answer j of prompt i, whatever order
// the updates come in; a prompt's tokens count once in the usage.
TEST(TextCompletionEncoderTest, EveryAnswerOfEveryPromptInIndexOrder) {
  TextCompletionEncoder encoder(Identity(), {.prompts = 2, .n = 2});
  const std::vector<std::pair<int, std::string>> order = {{3, "d"}, {0, "a"}, {2, "c"}, {1, "b"}};
  for (const auto& [choice, text] : order) {
    GenerationUpdate token = Token(text, {});
    token.choice = choice;
    EXPECT_EQ(encoder.Encode(std::move(token)), "");
  }
  std::string body;
  for (const auto& [choice, text] : order) {
    EXPECT_FALSE(encoder.finished());
    GenerationUpdate end = Final(choice == 2 ? FinishReason::kLength : FinishReason::kStop);
    end.choice = choice;
    end.usage.prompt_tokens = choice < 2 ? 12 : 5;
    body = encoder.Encode(std::move(end));
  }
  EXPECT_TRUE(encoder.finished());
  const nlohmann::json c = nlohmann::json::parse(body);
  ASSERT_EQ(c["choices"].size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(c["choices"][i]["index"], i);
    EXPECT_EQ(c["choices"][i]["text"], std::string(1, static_cast<char>('a' + i)));
    EXPECT_EQ(c["choices"][i]["finish_reason"], i == 2 ? "length" : "stop");
  }
  EXPECT_EQ(c["usage"]["prompt_tokens"], 17);
  EXPECT_EQ(c["usage"]["completion_tokens"], 8);

  TextCompletionEncoder streamed(Identity(), {.stream = true, .include_usage = true, .n = 2});
  GenerationUpdate second = Final(FinishReason::kStop);
  second.choice = 1;
  std::vector<nlohmann::json> e = Events(streamed.Encode(std::move(second)));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0]["choices"][0]["index"], 1);
  EXPECT_FALSE(streamed.finished());
  e = Events(streamed.Encode(Final(FinishReason::kStop)));
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0]["choices"][0]["index"], 0);
  EXPECT_EQ(e[1]["usage"]["prompt_tokens"], 12);
  EXPECT_EQ(e[1]["usage"]["completion_tokens"], 4);
  EXPECT_EQ(e[2], "[DONE]");
}

// echo: each answer starts with its prompt's text, streamed in the answer's first chunk.
TEST(TextCompletionEncoderTest, EchoStartsEachAnswerWithItsPrompt) {
  TextCompletionEncoder encoder(Identity(), {.prompts = 2, .echo = {"Once", "Twice"}});
  for (int choice : {1, 0}) {
    GenerationUpdate token = Token(" more", {});
    token.choice = choice;
    encoder.Encode(std::move(token));
    GenerationUpdate end = Final(FinishReason::kStop);
    end.choice = choice;
    const std::string body = encoder.Encode(std::move(end));
    if (choice == 0) {
      const nlohmann::json c = nlohmann::json::parse(body);
      EXPECT_EQ(c["choices"][0]["text"], "Once more");
      EXPECT_EQ(c["choices"][1]["text"], "Twice more");
    }
  }
  TextCompletionEncoder streamed(Identity(), {.stream = true, .echo = {"Once"}});
  std::vector<nlohmann::json> e = Events(streamed.Encode(Token(" more", {})));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0]["choices"][0]["text"], "Once more");
  e = Events(streamed.Encode(Token(" again", {})));
  EXPECT_EQ(e[0]["choices"][0]["text"], " again");
  // An answer with no token still echoes its prompt.
  TextCompletionEncoder empty(Identity(), {.stream = true, .echo = {"Once"}});
  e = Events(empty.Encode(Final(FinishReason::kStop)));
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0]["choices"][0]["text"], "Once");
  EXPECT_EQ(e[1]["choices"][0]["finish_reason"], "stop");
}

// echo with logprobs (lm-evaluation-harness scores a text this way): the prompt's tokens
// lead each answer's lists, the first without a logprob; the answer's offsets follow the
// prompt's text. The prompt's tokens come with answer 0's first update: answer 1's
// updates before it wait for them.
TEST(TextCompletionEncoderTest, EchoWithLogprobsLeadsWithThePromptsTokens) {
  auto prompt_tokens = [] {
    std::vector<GeneratedToken> tokens(2);
    tokens[0].chosen = {7, "The", 0};
    tokens[1].chosen = {8, " sky", -1.5f};
    tokens[1].top = {{9, " sea", -0.5f}, {8, " sky", -1.5f}};
    return tokens;
  };
  for (const bool stream : {false, true}) {
    TextCompletionEncoder encoder(Identity(),
                                  {.stream = stream, .logprobs = 1, .n = 2, .echo = {"The sky"}});
    GenerationUpdate early = Token(" is", {});
    early.choice = 1;
    EXPECT_EQ(encoder.Encode(std::move(early)), "");
    GenerationUpdate first = Token(" was", {});
    first.prompt_tokens = prompt_tokens();
    std::string out = encoder.Encode(std::move(first));
    for (int choice : {1, 0}) {
      GenerationUpdate end = Final(FinishReason::kLength);
      end.choice = choice;
      out += encoder.Encode(std::move(end));
    }
    ASSERT_TRUE(encoder.finished());
    nlohmann::json answers = nlohmann::json::array({nullptr, nullptr});
    if (!stream) {
      answers = nlohmann::json::parse(out)["choices"];
    } else {
      for (const nlohmann::json& chunk : Events(out)) {
        if (!chunk.is_object() || chunk["choices"].empty()) continue;
        const nlohmann::json& c = chunk["choices"][0];
        if (c["text"] == "") continue;
        EXPECT_TRUE(answers[c["index"].get<int>()].is_null()) << "one chunk per answer";
        answers[c["index"].get<int>()] = c;
      }
    }
    const std::vector<std::string> texts = {"The sky was", "The sky is"};
    for (int i = 0; i < 2; ++i) {
      const nlohmann::json& a = answers[i];
      EXPECT_EQ(a["text"], texts[i]);
      const nlohmann::json& l = a["logprobs"];
      EXPECT_EQ(l["tokens"], (nlohmann::json{"The", " sky", i == 0 ? " was" : " is"}));
      EXPECT_EQ(l["token_logprobs"], (nlohmann::json{nullptr, -1.5, -0.25}));
      EXPECT_EQ(l["top_logprobs"][0], nullptr);
      EXPECT_EQ(l["top_logprobs"][1], (nlohmann::json{{" sea", -0.5}, {" sky", -1.5}}));
      EXPECT_EQ(l["text_offset"], (nlohmann::json{0, 3, 7}));
    }
  }
}

// max_tokens 0 with echo: the engine's one token is left out of text, lists and usage,
// and the answer ends by "length" whatever ended the engine's.
TEST(TextCompletionEncoderTest, APromptOnlyAnswerIsItsPrompt) {
  for (const bool stream : {false, true}) {
    TextCompletionEncoder encoder(
        Identity(), {.stream = stream, .logprobs = 0, .echo = {"The sky"}, .prompt_only = true});
    GenerationUpdate token = Token(" is", {});
    token.prompt_tokens.resize(2);
    token.prompt_tokens[0].chosen = {7, "The", 0};
    token.prompt_tokens[1].chosen = {8, " sky", -1.5f};
    std::string out = encoder.Encode(std::move(token));
    GenerationUpdate end = Final(FinishReason::kStop);
    end.stop_token = 151645;
    out += encoder.Encode(std::move(end));
    ASSERT_TRUE(encoder.finished());
    nlohmann::json answer, usage;
    if (stream) {
      const std::vector<nlohmann::json> e = Events(out);
      ASSERT_EQ(e.size(), 3u);
      answer = e[0]["choices"][0];
      EXPECT_EQ(e[1]["choices"][0]["finish_reason"], "length");
      EXPECT_EQ(e[1]["choices"][0]["stop_reason"], nullptr);
    } else {
      const nlohmann::json c = nlohmann::json::parse(out);
      answer = c["choices"][0];
      usage = c["usage"];
      EXPECT_EQ(answer["finish_reason"], "length");
      EXPECT_EQ(answer["stop_reason"], nullptr);
      EXPECT_EQ(usage["completion_tokens"], 0);
      EXPECT_EQ(usage["prompt_tokens"], 12);
    }
    EXPECT_EQ(answer["text"], "The sky");
    EXPECT_EQ(answer["logprobs"]["tokens"], (nlohmann::json{"The", " sky"}));
    EXPECT_EQ(answer["logprobs"]["token_logprobs"], (nlohmann::json{nullptr, -1.5}));
  }
}

// vLLM's prompt_logprobs: each choice carries its prompt's, from answer 0's update.
TEST(TextCompletionEncoderTest, EachChoiceCarriesItsPromptsVllmLogprobs) {
  TextCompletionEncoder encoder(Identity(), {.prompts = 2, .prompt_logprobs = 0});
  for (int choice : {1, 0}) {
    GenerationUpdate token = Token(" is", {});
    token.choice = choice;
    token.prompt_tokens.resize(2);
    token.prompt_tokens[0].chosen = {7, "A", 0};
    token.prompt_tokens[1].chosen = {8 + choice, " b", -1.5f};
    token.prompt_tokens[1].rank = 4;
    encoder.Encode(std::move(token));
  }
  std::string body;
  for (int choice : {0, 1}) {
    GenerationUpdate end = Final(FinishReason::kStop);
    end.choice = choice;
    body = encoder.Encode(std::move(end));
  }
  const nlohmann::json c = nlohmann::json::parse(body);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(
        c["choices"][i]["prompt_logprobs"],
        nlohmann::json::array(
            {nullptr,
             {{std::to_string(8 + i), {{"logprob", -1.5}, {"rank", 4}, {"decoded_token", " b"}}}}}))
        << i;
  }
}

}  // namespace
}  // namespace qvl
