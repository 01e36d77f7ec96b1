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
  ASSERT_TRUE(plain.generation.prompt_text);
  EXPECT_EQ(*plain.generation.prompt_text, "Once upon a time");
  EXPECT_TRUE(plain.generation.messages.empty());
  EXPECT_TRUE(plain.generation.images.empty());
  EXPECT_EQ(plain.model, "qwen3-vl");
  EXPECT_EQ(*Parse(Body({"<|im_start|>user"})).generation.prompt_text, "<|im_start|>user");
}

TEST_F(CompletionRequestTest, TokenIdsAloneOrAsTheOneItem) {
  for (const nlohmann::json& prompt :
       {nlohmann::json{151644, 872, 198}, nlohmann::json{{151644, 872, 198}}}) {
    const CompletionRequest r = Parse(Body(prompt));
    EXPECT_EQ(r.generation.prompt_tokens, (std::vector<int32_t>{151644, 872, 198}));
    EXPECT_FALSE(r.generation.prompt_text);
  }
}

TEST_F(CompletionRequestTest, DefaultsAsOpenAi) {
  const CompletionRequest r = Parse(Body("x"));
  EXPECT_EQ(r.generation.max_tokens, 16);
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(r.logprobs, -1);
  EXPECT_EQ(r.generation.top_logprobs, -1);
  EXPECT_FALSE(r.generation.sampling.temperature);
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
  const GenerationRequest& g = r.generation;
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
  testing::ExpectReturnProgressOnlyWhenStreamed(
      Body("x"), [&](const nlohmann::json& body) { return Parse(body); });
}

TEST_F(CompletionRequestTest, RefusalsNameTheField) {
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}}, ErrorCode::kInvalidArgument, "prompt"),
            "prompt: is required");
  EXPECT_EQ(ErrorOf(Body(""), ErrorCode::kInvalidArgument, "prompt"), "prompt: must not be empty");
  EXPECT_EQ(ErrorOf(Body({"a", "b", "c"}), ErrorCode::kInvalidArgument, "prompt"),
            "prompt: only one prompt per request is supported, got an array of 3");
  EXPECT_EQ(ErrorOf(Body(nlohmann::json::array()), ErrorCode::kInvalidArgument, "prompt"),
            "prompt: only one prompt per request is supported, got an array of 0");
  EXPECT_EQ(ErrorOf(Body({"a", 7}), ErrorCode::kInvalidArgument, "prompt"),
            "prompt: only one prompt per request is supported, got an array of 2");
  EXPECT_EQ(ErrorOf(Body({{1, 2}, {3}}), ErrorCode::kInvalidArgument, "prompt"),
            "prompt: only one prompt per request is supported, got an array of 2");
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
  EXPECT_EQ(ErrorOf(with("echo", true), ErrorCode::kInvalidArgument, "echo"),
            "echo: is not supported (the prompt is not returned)");
  EXPECT_EQ(Parse(with("echo", false)).generation.max_tokens, 16);
  EXPECT_EQ(ErrorOf(with("suffix", "tail"), ErrorCode::kInvalidArgument, "suffix"),
            "suffix: is not supported (no text insertion)");
  EXPECT_EQ(ErrorOf(with("best_of", 3), ErrorCode::kInvalidArgument, "best_of"),
            "best_of: only best_of = 1 is supported, got 3");
  EXPECT_EQ(Parse(with("best_of", 1)).generation.max_tokens, 16);
  EXPECT_EQ(ErrorOf(with("n", 2), ErrorCode::kInvalidArgument, "n"),
            "n: only n = 1 is supported, got 2");
  EXPECT_EQ(
      ErrorOf(with("logit_bias", {{"50256", -100}}), ErrorCode::kInvalidArgument, "logit_bias"),
      "logit_bias: is not supported on /v1/completions");
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
