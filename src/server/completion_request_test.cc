#include "server/completion_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/field_error.h"
#include "server/request_checks_for_test.h"

namespace qvl {
namespace {

class CompletionRequestTest : public ::testing::Test {
 protected:
  CompletionRequest Parse(const nlohmann::json& body) {
    return ParseCompletionRequest(body.dump(), policy_);
  }

  // The message of the FieldError the body raises; checks its code and field.
  std::string ErrorOf(const nlohmann::json& body, ErrorCode code, const std::string& field) {
    return testing::FieldErrorOf([&] { ParseCompletionRequest(body.dump(), policy_); }, code,
                                 field);
  }

  static nlohmann::json Body(nlohmann::json prompt) {
    return {{"model", "qwen3-vl"}, {"prompt", std::move(prompt)}};
  }

  ChatRequestPolicy policy_ = [] {
    ChatRequestPolicy p;
    p.model_names = {"Qwen/Qwen3-VL-2B-Instruct", "qwen3-vl"};
    p.pixels_per_image_token = 32 * 32;
    return p;
  }();
};

TEST_F(CompletionRequestTest, APromptStringOrOneStringArray) {
  const CompletionRequest plain = Parse(Body("Once upon a time"));
  ASSERT_TRUE(plain.generations[0].prompt_text);
  EXPECT_EQ(*plain.generations[0].prompt_text, "Once upon a time");
  EXPECT_TRUE(plain.generations[0].messages.empty());
  EXPECT_TRUE(plain.generations[0].images.empty());
  EXPECT_EQ(plain.model, "qwen3-vl");
  EXPECT_EQ(*Parse(Body({"<|im_start|>user"})).generations[0].prompt_text, "<|im_start|>user");
}

TEST_F(CompletionRequestTest, TokenIdsAloneOrAsTheOneItem) {
  for (const nlohmann::json& prompt :
       {nlohmann::json{151644, 872, 198}, nlohmann::json{{151644, 872, 198}}}) {
    const CompletionRequest r = Parse(Body(prompt));
    EXPECT_EQ(r.generations[0].prompt_tokens, (std::vector<int32_t>{151644, 872, 198}));
    EXPECT_FALSE(r.generations[0].prompt_text);
  }
}

TEST_F(CompletionRequestTest, DefaultsAsOpenAi) {
  const CompletionRequest r = Parse(Body("x"));
  EXPECT_EQ(r.generations[0].max_tokens, 16);
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(r.logprobs, -1);
  EXPECT_EQ(r.generations[0].top_logprobs, -1);
  EXPECT_FALSE(r.generations[0].sampling.temperature);
}

TEST_F(CompletionRequestTest, SharedGenerationFields) {
  nlohmann::json body = Body("x");
  body.update({{"max_tokens", 40},
               {"temperature", 0.5},
               {"top_p", 0.9},
               {"top_k", 5},
               {"min_p", 0.1},
               {"presence_penalty", 0.5},
               {"frequency_penalty", -0.5},
               {"repetition_penalty", 1.1},
               {"seed", 7},
               {"stop", {"\n\n", "END"}},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}},
               {"logprobs", 3},
               {"ignore_eos", true},
               {"user", "someone"}});
  const CompletionRequest r = Parse(body);
  const GenerationRequest& g = r.generations[0];
  EXPECT_EQ(g.max_tokens, 40);
  EXPECT_FLOAT_EQ(*g.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(*g.sampling.top_p, 0.9f);
  EXPECT_EQ(*g.sampling.top_k, 5);
  EXPECT_FLOAT_EQ(*g.sampling.min_p, 0.1f);
  EXPECT_FLOAT_EQ(*g.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(*g.sampling.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(*g.sampling.repetition_penalty, 1.1f);
  EXPECT_EQ(*g.sampling.seed, 7u);
  EXPECT_EQ(g.stop, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.logprobs, 3);
  EXPECT_EQ(g.top_logprobs, 3);
  EXPECT_TRUE(g.ignore_eos);
}

TEST_F(CompletionRequestTest, ReturnProgressAsksForProgressWhenStreamed) {
  // The checks read a request's generation: its one prompt's here.
  struct OnePrompt {
    GenerationRequest generation;
    bool return_progress;
  };
  testing::ExpectReturnProgressOnlyWhenStreamed(Body("x"), [&](const nlohmann::json& body) {
    CompletionRequest r = Parse(body);
    return OnePrompt{std::move(r.generations[0]), r.return_progress};
  });
}

TEST_F(CompletionRequestTest, RefusalsNameTheField) {
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}}, ErrorCode::kInvalidArgument, "prompt"),
            "prompt: is required");
  EXPECT_EQ(ErrorOf(Body(""), ErrorCode::kInvalidArgument, "prompt"), "prompt: must not be empty");
  EXPECT_EQ(ErrorOf(Body(nlohmann::json::array()), ErrorCode::kInvalidArgument, "prompt"),
            "prompt: must not be empty");
  EXPECT_EQ(ErrorOf(Body({"a", 7}), ErrorCode::kInvalidArgument, "prompt[1]"),
            "prompt[1]: expected a string or token ids, got integer");
  EXPECT_EQ(
      ErrorOf(Body(std::vector<std::string>(129, "a")), ErrorCode::kInvalidArgument, "prompt"),
      "prompt: at most 128 prompts per request are supported, got 129");
  EXPECT_EQ(ErrorOf(Body({1, "two"}), ErrorCode::kInvalidArgument, "prompt[1]"),
            "prompt[1]: expected a token id (an integer from 0), got \"two\"");
  EXPECT_EQ(ErrorOf(Body({{1, -2}}), ErrorCode::kInvalidArgument, "prompt[0][1]"),
            "prompt[0][1]: expected a token id (an integer from 0), got -2");
  EXPECT_EQ(ErrorOf(Body({nlohmann::json::array()}), ErrorCode::kInvalidArgument, "prompt[0]"),
            "prompt[0]: must not be empty");
  EXPECT_EQ(ErrorOf(Body({""}), ErrorCode::kInvalidArgument, "prompt[0]"),
            "prompt[0]: must not be empty");
  EXPECT_EQ(ErrorOf(Body({{"text", "x"}}), ErrorCode::kInvalidArgument, "prompt"),
            "prompt: expected a string or token ids, got object");

  auto with = [](const char* key, nlohmann::json value) {
    nlohmann::json body = Body("x");
    body[key] = std::move(value);
    return body;
  };
  EXPECT_EQ(ErrorOf(with("suffix", "tail"), ErrorCode::kInvalidArgument, "suffix"),
            "suffix: is not supported (no text insertion)");
  EXPECT_EQ(ErrorOf(with("best_of", 3), ErrorCode::kInvalidArgument, "best_of"),
            "best_of: only best_of = 1 is supported, got 3 (as vLLM's; ask for n answers and "
            "choose among them)");
  EXPECT_EQ(Parse(with("best_of", 1)).generations[0].max_tokens, 16);
  EXPECT_EQ(ErrorOf(with("n", 0), ErrorCode::kInvalidArgument, "n"),
            "n: must be between 1 and 128, got 0");
  nlohmann::json many = with("n", 65);
  many["prompt"] = {"a", "b"};
  EXPECT_EQ(ErrorOf(many, ErrorCode::kInvalidArgument, "n"),
            "n: prompts times n must be at most 128, got 2 x 65");
  EXPECT_EQ(ErrorOf(with("tools", {{{"type", "function"}}}), ErrorCode::kInvalidArgument, "tools"),
            "tools: is not supported on /v1/completions; use /v1/chat/completions");
  EXPECT_EQ(ErrorOf(with("logit_bias", {{"x", 1}}), ErrorCode::kInvalidArgument, "logit_bias.x"),
            "logit_bias.x: keys must be token ids, got \"x\"");
  nlohmann::json both = with("guided_json", {{"type", "object"}});
  both["response_format"] = {{"type", "json_object"}};
  EXPECT_EQ(ErrorOf(both, ErrorCode::kInvalidArgument, "guided_json"),
            "guided_json: cannot be combined with response_format or a forced tool call");
  EXPECT_EQ(ErrorOf(with("logprobs", 6), ErrorCode::kInvalidArgument, "logprobs"),
            "logprobs: must be between 0 and 5, got 6");
  EXPECT_EQ(ErrorOf(with("logprobs", true), ErrorCode::kInvalidArgument, "logprobs"),
            "logprobs: expected an integer, got boolean");
  EXPECT_EQ(ErrorOf(with("max_tokens", 0), ErrorCode::kInvalidArgument, "max_tokens"),
            "max_tokens: must be between 1 and 1048576, got 0");
  EXPECT_EQ(ErrorOf(with("temperature", "warm"), ErrorCode::kInvalidArgument, "temperature"),
            "temperature: expected a number, got string");
  EXPECT_EQ(ErrorOf(with("stop", {""}), ErrorCode::kInvalidArgument, "stop[0]"),
            "stop[0]: stop strings cannot be empty");
  EXPECT_EQ(ErrorOf(with("model", "gpt-3.5-turbo-instruct"), ErrorCode::kNotFound, "model"),
            "model: the model \"gpt-3.5-turbo-instruct\" does not exist; this server serves "
            "\"Qwen/Qwen3-VL-2B-Instruct\", \"qwen3-vl\"");
}

// OpenAI's prompt arrays: one engine request per prompt, every other field shared; a
// prompt too long for the context is named by its index.
TEST_F(CompletionRequestTest, SeveralPromptsEachWithTheSharedFields) {
  nlohmann::json body = Body({"Once", nlohmann::json{1, 2}, "Twice"});
  body.update({{"max_tokens", 3}, {"n", 2}, {"temperature", 0.5}});
  const CompletionRequest r = Parse(body);
  ASSERT_EQ(r.generations.size(), 3u);
  EXPECT_EQ(*r.generations[0].prompt_text, "Once");
  EXPECT_EQ(r.generations[1].prompt_tokens, (std::vector<int32_t>{1, 2}));
  EXPECT_FALSE(r.generations[1].prompt_text);
  EXPECT_EQ(*r.generations[2].prompt_text, "Twice");
  for (size_t i = 0; i < 3; ++i) {
    const GenerationRequest& g = r.generations[i];
    EXPECT_EQ(g.messages_field, "prompt[" + std::to_string(i) + "]");
    EXPECT_EQ(g.max_tokens, 3);
    EXPECT_EQ(g.n, 2);
    EXPECT_FLOAT_EQ(*g.sampling.temperature, 0.5f);
  }
  EXPECT_EQ(Parse(Body("x")).generations[0].messages_field, "prompt");
  EXPECT_EQ(Parse(Body({"x"})).generations[0].messages_field, "prompt[0]");
}

// What chat has and the legacy API shares: n, logit_bias and structured output.
TEST_F(CompletionRequestTest, NLogitBiasAndResponseFormatAsOnChat) {
  nlohmann::json body = Body("x");
  body.update(
      {{"n", 3}, {"logit_bias", {{"42", -100}}}, {"response_format", {{"type", "json_object"}}}});
  const CompletionRequest r = Parse(body);
  const GenerationRequest& g = r.generations[0];
  EXPECT_EQ(g.n, 3);
  ASSERT_EQ(g.logit_bias.size(), 1u);
  EXPECT_EQ(g.logit_bias[0].token, 42);
  EXPECT_FLOAT_EQ(g.logit_bias[0].bias, -100);
  EXPECT_NE(g.grammar, nullptr);
  EXPECT_EQ(Parse(Body("x")).generations[0].grammar, nullptr);
}

// echo repeats the prompt; with logprobs the engine scores the prompt's tokens too.
TEST_F(CompletionRequestTest, EchoAsksForThePromptsLogprobsWithLogprobs) {
  nlohmann::json body = Body("x");
  body["echo"] = true;
  EXPECT_TRUE(Parse(body).echo);
  EXPECT_EQ(Parse(body).generations[0].prompt_logprobs, -1);
  body["logprobs"] = 2;
  EXPECT_EQ(Parse(body).generations[0].prompt_logprobs, 2);
  body["echo"] = false;
  EXPECT_FALSE(Parse(body).echo);
  EXPECT_EQ(Parse(body).generations[0].prompt_logprobs, -1);

  // max_tokens 0: the prompt alone, for which the engine reads it as for one token.
  body["max_tokens"] = 0;
  EXPECT_EQ(ErrorOf(body, ErrorCode::kInvalidArgument, "max_tokens"),
            "max_tokens: must be between 1 and 1048576, got 0");
  body["echo"] = true;
  const CompletionRequest scored = Parse(body);
  EXPECT_TRUE(scored.prompt_only);
  EXPECT_EQ(scored.generations[0].max_tokens, 1);
  EXPECT_EQ(scored.generations[0].prompt_logprobs, 2);
  body["max_tokens"] = 1;
  EXPECT_FALSE(Parse(body).prompt_only);
}

// vLLM's prompt_logprobs: its own shape, beside an echo's; the engine scores the prompt
// with the most alternatives either asks for.
TEST_F(CompletionRequestTest, VllmsPromptLogprobs) {
  nlohmann::json body = Body("x");
  EXPECT_EQ(Parse(body).prompt_logprobs, -1);
  body["prompt_logprobs"] = nullptr;
  EXPECT_EQ(Parse(body).prompt_logprobs, -1);
  body["prompt_logprobs"] = 3;
  EXPECT_EQ(Parse(body).prompt_logprobs, 3);
  EXPECT_EQ(Parse(body).generations[0].prompt_logprobs, 3);
  body.update({{"echo", true}, {"logprobs", 5}});
  EXPECT_EQ(Parse(body).prompt_logprobs, 3);
  EXPECT_EQ(Parse(body).generations[0].prompt_logprobs, 5);
  body["stream"] = true;
  EXPECT_EQ(ErrorOf(body, ErrorCode::kInvalidArgument, "prompt_logprobs"),
            "prompt_logprobs: is not available with stream true (as in vLLM): ask without "
            "streaming");
}

TEST_F(CompletionRequestTest, MalformedBodies) {
  try {
    ParseCompletionRequest("[1]", policy_);
    FAIL();
  } catch (const FieldError& e) {
    EXPECT_STREQ(e.what(), "the request body must be a JSON object, got array");
    EXPECT_EQ(e.field(), "");
  }
  try {
    ParseCompletionRequest("{\"prompt\": ", policy_);
    FAIL();
  } catch (const FieldError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("malformed JSON in the request body: ", 0), 0u);
  }
}

}  // namespace
}  // namespace qvl
