#include "server/embeddings_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/field_error.h"
#include "server/chat_request_policy_for_test.h"
#include "tiny_cases.h"

namespace qvl {
namespace {

using nlohmann::json;

constexpr int64_t kHiddenSize = 64;
constexpr char kNotEmbedding[] =
    ": is not an embeddings field: an embedding is read off the prompt and nothing is generated";

enum class Api { kOpenAI, kOllama, kOllamaLegacy };

class EmbeddingsRequestTest : public ::testing::Test {
 protected:
  EmbeddingsRequest Parse(const json& body, Api api = Api::kOpenAI) {
    switch (api) {
      case Api::kOpenAI:
        return ParseEmbeddingsRequest(body.dump(), policy_, kHiddenSize);
      case Api::kOllama:
        return ParseOllamaEmbedRequest(body.dump(), policy_, kHiddenSize);
      case Api::kOllamaLegacy:
        return ParseOllamaEmbeddingsRequest(body.dump(), policy_);
    }
    return {};
  }

  // The message of the FieldError the body raises; checks its code and field.
  std::string ErrorOf(const json& body, const std::string& field, Api api = Api::kOpenAI,
                      ErrorCode code = ErrorCode::kInvalidArgument) {
    try {
      Parse(body, api);
    } catch (const FieldError& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_EQ(e.field(), field) << e.what();
      return e.what();
    }
    return "no error";
  }

  ChatRequestPolicy policy_ = testing::TestChatPolicy();
};

// Every input is an embed request with no token limit, named for a too-long prompt.
void ExpectEmbedInput(const GenerationRequest& g, const std::string& field) {
  EXPECT_TRUE(g.embed);
  EXPECT_EQ(g.max_tokens, 0);
  EXPECT_EQ(g.messages_field, field);
}

TEST_F(EmbeddingsRequestTest, AStringIsOneRawPrompt) {
  const EmbeddingsRequest r = Parse({{"model", "qwen3-vl"}, {"input", "The food was delicious"}});
  EXPECT_EQ(r.model, "qwen3-vl");
  EXPECT_FALSE(r.base64);
  EXPECT_EQ(r.dimensions, 0);
  ASSERT_EQ(r.inputs.size(), 1u);
  ExpectEmbedInput(r.inputs[0], "input");
  EXPECT_EQ(r.inputs[0].prompt_text, "The food was delicious");
  EXPECT_TRUE(r.inputs[0].messages.empty());
  EXPECT_TRUE(r.inputs[0].prompt_tokens.empty());
}

TEST_F(EmbeddingsRequestTest, ModelMayBeLeftOut) { EXPECT_EQ(Parse({{"input", "x"}}).model, ""); }

TEST_F(EmbeddingsRequestTest, StringsAreOneInputEachInOrder) {
  const EmbeddingsRequest r = Parse({{"input", {"first", "second", "third"}}});
  ASSERT_EQ(r.inputs.size(), 3u);
  const std::vector<std::string> texts = {"first", "second", "third"};
  for (size_t i = 0; i < 3; ++i) {
    ExpectEmbedInput(r.inputs[i], "input[" + std::to_string(i) + "]");
    EXPECT_EQ(r.inputs[i].prompt_text, texts[i]);
  }
}

TEST_F(EmbeddingsRequestTest, TokenIdsAreOneInput) {
  const EmbeddingsRequest r = Parse({{"input", {9707, 11, 1879}}});
  ASSERT_EQ(r.inputs.size(), 1u);
  ExpectEmbedInput(r.inputs[0], "input");
  EXPECT_EQ(r.inputs[0].prompt_tokens, (std::vector<int32_t>{9707, 11, 1879}));
  EXPECT_FALSE(r.inputs[0].prompt_text.has_value());
}

TEST_F(EmbeddingsRequestTest, ListsOfTokenIdsAndStringsMix) {
  const EmbeddingsRequest r = Parse({{"input", json::array({{1, 2}, "text", {3}})}});
  ASSERT_EQ(r.inputs.size(), 3u);
  EXPECT_EQ(r.inputs[0].prompt_tokens, (std::vector<int32_t>{1, 2}));
  ExpectEmbedInput(r.inputs[0], "input[0]");
  EXPECT_EQ(r.inputs[1].prompt_text, "text");
  EXPECT_EQ(r.inputs[2].prompt_tokens, (std::vector<int32_t>{3}));
  ExpectEmbedInput(r.inputs[2], "input[2]");
}

TEST_F(EmbeddingsRequestTest, EncodingFormatAndDimensions) {
  const EmbeddingsRequest r =
      Parse({{"input", "x"}, {"encoding_format", "base64"}, {"dimensions", 32}, {"user", "u1"}});
  EXPECT_TRUE(r.base64);
  EXPECT_EQ(r.dimensions, 32);
  EXPECT_FALSE(Parse({{"input", "x"}, {"encoding_format", "float"}}).base64);
  EXPECT_EQ(Parse({{"input", "x"}, {"dimensions", kHiddenSize}}).dimensions, kHiddenSize);
}

TEST_F(EmbeddingsRequestTest, MessagesWithAnImageAreOneChatInput) {
  const std::string url = testing::DataUrl(
      std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/02_one_image_jpeg/images/photo.jpg");
  const json messages = json::array({{{"role", "user"},
                                      {"content",
                                       {{{"type", "image_url"}, {"image_url", {{"url", url}}}},
                                        {{"type", "text"}, {"text", "A photo."}}}}}});
  const EmbeddingsRequest r = Parse({{"model", "qwen3-vl"}, {"messages", messages}});
  ASSERT_EQ(r.inputs.size(), 1u);
  const GenerationRequest& g = r.inputs[0];
  ExpectEmbedInput(g, "messages");
  EXPECT_FALSE(g.add_generation_prompt);
  EXPECT_FALSE(g.continue_final_message);
  EXPECT_FALSE(g.prompt_text.has_value());
  ASSERT_EQ(g.messages.size(), 1u);
  ASSERT_EQ(g.messages[0].parts.size(), 2u);
  EXPECT_EQ(g.messages[0].parts[0].kind, ChatPart::Kind::kImage);
  EXPECT_EQ(g.messages[0].parts[1].text, "A photo.");
  ASSERT_EQ(g.images.size(), 1u);
  EXPECT_EQ(g.images[0].field, "messages[0].content[0].image_url.url");
  EXPECT_EQ(g.images[0].bytes.size(),
            testing::ReadFile(std::string(QVL_TEST_DATA) +
                              "/tiny-qwen3vl/cases/02_one_image_jpeg/images/photo.jpg")
                .size());

  const EmbeddingsRequest opened = Parse(
      {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"add_generation_prompt", true}});
  EXPECT_TRUE(opened.inputs[0].add_generation_prompt);
}

TEST_F(EmbeddingsRequestTest, NeutralGenerationFieldsAreAccepted) {
  const EmbeddingsRequest r = Parse({{"input", "x"},
                                     {"stream", false},
                                     {"n", 1},
                                     {"tools", json::array()},
                                     {"logprobs", false},
                                     {"max_tokens", nullptr},
                                     {"unknown_field", 3}});
  EXPECT_EQ(r.inputs.size(), 1u);
}

TEST_F(EmbeddingsRequestTest, GenerationFieldsAreRefusedByName) {
  const std::vector<std::pair<std::string, json>> fields = {
      {"max_tokens", 5},
      {"temperature", 0.7},
      {"n", 2},
      {"stream", true},
      {"response_format", {{"type", "json_object"}}},
      {"tools", json::array({{{"type", "function"}}})},
      {"logprobs", true},
      {"stop", "x"},
      {"guided_json", {{"type", "object"}}}};
  for (const auto& [key, value] : fields) {
    EXPECT_EQ(ErrorOf({{"input", "x"}, {key, value}}, key), key + kNotEmbedding) << key;
  }
}

TEST_F(EmbeddingsRequestTest, EmptyInputsAreRefused) {
  EXPECT_EQ(ErrorOf({{"input", ""}}, "input"), "input: must not be empty");
  EXPECT_EQ(ErrorOf({{"input", json::array()}}, "input"), "input: must not be empty");
  EXPECT_EQ(ErrorOf({{"input", {"a", "b", "c", ""}}}, "input[3]"), "input[3]: must not be empty");
  EXPECT_EQ(ErrorOf({{"input", json::array({{1}, json::array()})}}, "input[1]"),
            "input[1]: must not be empty");
}

TEST_F(EmbeddingsRequestTest, TooManyInputsAreRefused) {
  const json inputs(static_cast<size_t>(kMaxEmbeddingInputs) + 1, "x");
  EXPECT_EQ(ErrorOf({{"input", inputs}}, "input"),
            "input: at most 128 inputs per request, got 129");
  const json most(static_cast<size_t>(kMaxEmbeddingInputs), "x");
  EXPECT_EQ(Parse({{"input", most}}).inputs.size(), 128u);
}

TEST_F(EmbeddingsRequestTest, BadInputShapesAreRefused) {
  EXPECT_EQ(ErrorOf({{"input", {{"text", "x"}}}}, "input"),
            "input: expected a string, an array of strings or token ids, got object");
  EXPECT_EQ(ErrorOf({{"input", json::array({"a", 3})}}, "input[1]"),
            "input[1]: expected a string or token ids, got integer");
  EXPECT_EQ(ErrorOf({{"input", {1, -2}}}, "input[1]"),
            "input[1]: expected a token id (an integer from 0), got -2");
  EXPECT_EQ(ErrorOf({{"input", json::array({{1, "a"}})}}, "input[0][1]"),
            "input[0][1]: expected a token id (an integer from 0), got \"a\"");
  EXPECT_EQ(ErrorOf(json::object(), "input"),
            "input: is required: the text or token ids to embed (or vLLM's messages)");
}

TEST_F(EmbeddingsRequestTest, DimensionsAndEncodingFormatAreChecked) {
  EXPECT_EQ(ErrorOf({{"input", "x"}, {"dimensions", 0}}, "dimensions"),
            "dimensions: must be between 1 and 64, got 0");
  EXPECT_EQ(ErrorOf({{"input", "x"}, {"dimensions", 65}}, "dimensions"),
            "dimensions: must be between 1 and 64, got 65");
  EXPECT_EQ(ErrorOf({{"input", "x"}, {"dimensions", 2.5}}, "dimensions"),
            "dimensions: expected an integer, got 2.5");
  EXPECT_EQ(ErrorOf({{"input", "x"}, {"encoding_format", "int8"}}, "encoding_format"),
            "encoding_format: expected \"float\" or \"base64\", got \"int8\"");
}

TEST_F(EmbeddingsRequestTest, InputAndMessagesTogetherAreRefused) {
  EXPECT_EQ(
      ErrorOf({{"input", "x"}, {"messages", {{{"role", "user"}, {"content", "y"}}}}}, "messages"),
      "messages: give input or messages, not both");
}

TEST_F(EmbeddingsRequestTest, ChatFlagsAreChecked) {
  const json messages = {{{"role", "user"}, {"content", "hi"}}};
  EXPECT_EQ(
      ErrorOf({{"messages", messages}, {"continue_final_message", true}}, "continue_final_message"),
      "continue_final_message: is not an embeddings field: the messages are embedded as the chat "
      "template renders them; leave it out or set it to false");
  EXPECT_EQ(ErrorOf({{"input", "x"}, {"add_generation_prompt", true}}, "add_generation_prompt"),
            "add_generation_prompt: applies to messages only, not to input");
  EXPECT_EQ(ErrorOf({{"messages", json::array()}}, "messages"),
            "messages: needs at least one message");
  // The template's kwargs must say what the served template does, as on chat.
  EXPECT_EQ(ErrorOf({{"messages", messages}, {"chat_template_kwargs", {{"enable_thinking", true}}}},
                    "chat_template_kwargs.enable_thinking"),
            "chat_template_kwargs.enable_thinking: this model does not think (a Qwen3-VL "
            "Instruct model)");
  EXPECT_EQ(Parse({{"messages", messages}, {"chat_template_kwargs", {{"enable_thinking", false}}}})
                .inputs.size(),
            1u);
  EXPECT_EQ(ErrorOf({{"messages", messages}, {"chat_template", "{{ messages }}"}}, "chat_template"),
            "chat_template: is not supported: qvl renders the model's own chat template");
}

TEST_F(EmbeddingsRequestTest, AnUnknownModelIsNotFound) {
  EXPECT_NE(
      ErrorOf({{"model", "gpt-4"}, {"input", "x"}}, "model", Api::kOpenAI, ErrorCode::kNotFound)
          .find("the model \"gpt-4\" does not exist"),
      std::string::npos);
}

TEST_F(EmbeddingsRequestTest, OllamaTakesAStringOrStrings) {
  const EmbeddingsRequest one =
      Parse({{"model", "qwen3-vl:latest"}, {"input", "Why is the sky blue?"}}, Api::kOllama);
  EXPECT_EQ(one.model, "qwen3-vl:latest");
  EXPECT_FALSE(one.base64);
  ASSERT_EQ(one.inputs.size(), 1u);
  ExpectEmbedInput(one.inputs[0], "input");
  EXPECT_EQ(one.inputs[0].prompt_text, "Why is the sky blue?");

  const EmbeddingsRequest two = Parse({{"model", "qwen3-vl"},
                                       {"input", {"a", "b"}},
                                       {"truncate", true},
                                       {"dimensions", 8},
                                       {"keep_alive", "5m"},
                                       {"options", {{"temperature", 0.2}, {"num_ctx", 4096}}}},
                                      Api::kOllama);
  ASSERT_EQ(two.inputs.size(), 2u);
  ExpectEmbedInput(two.inputs[1], "input[1]");
  EXPECT_EQ(two.inputs[1].prompt_text, "b");
  EXPECT_EQ(two.dimensions, 8);
  // Options are checked, not carried: an embedding has no sampling.
  EXPECT_FALSE(two.inputs[0].sampling.temperature.has_value());
}

TEST_F(EmbeddingsRequestTest, OllamaEmptyInputListsNone) {
  for (const json& input : {json(""), json::array(), json(nullptr)}) {
    EXPECT_TRUE(Parse({{"model", "qwen3-vl"}, {"input", input}}, Api::kOllama).inputs.empty())
        << input.dump();
  }
  EXPECT_TRUE(Parse({{"model", "qwen3-vl"}}, Api::kOllama).inputs.empty());
}

TEST_F(EmbeddingsRequestTest, OllamaRefusals) {
  EXPECT_EQ(ErrorOf({{"input", "x"}}, "model", Api::kOllama), "model: is required");
  EXPECT_EQ(
      ErrorOf({{"model", "llama3"}, {"input", "x"}}, "model", Api::kOllama, ErrorCode::kNotFound)
          .rfind("model: the model \"llama3\" does not exist", 0),
      0u);
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}, {"input", {1, 2}}}, "input[0]", Api::kOllama),
            "input[0]: expected a string, got integer");
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}, {"input", {"a", ""}}}, "input[1]", Api::kOllama),
            "input[1]: must not be empty");
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}, {"input", 7}}, "input", Api::kOllama),
            "input: expected a string or an array of strings, got integer");
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}, {"input", "x"}, {"truncate", "yes"}}, "truncate",
                    Api::kOllama),
            "truncate: expected true or false, got string");
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}, {"input", "x"}, {"dimensions", 100}}, "dimensions",
                    Api::kOllama),
            "dimensions: must be between 1 and 64, got 100");
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}, {"input", "x"}, {"options", {{"bogus", 1}}}},
                    "options.bogus", Api::kOllama),
            "options.bogus: unknown option \"bogus\"");
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}, {"input", "x"}, {"keep_alive", true}}, "keep_alive",
                    Api::kOllama),
            "keep_alive: expected a duration (\"5m\") or a number of seconds, got boolean");
  const json inputs(static_cast<size_t>(kMaxEmbeddingInputs) + 1, "x");
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}, {"input", inputs}}, "input", Api::kOllama),
            "input: at most 128 inputs per request, got 129");
}

TEST_F(EmbeddingsRequestTest, OllamaLegacyPromptIsOneInput) {
  const EmbeddingsRequest r = Parse({{"model", "qwen3-vl:latest"},
                                     {"prompt", "Why is the sky blue?"},
                                     {"keep_alive", "5m"},
                                     {"options", {{"temperature", 0.2}, {"num_ctx", 4096}}}},
                                    Api::kOllamaLegacy);
  EXPECT_EQ(r.model, "qwen3-vl:latest");
  EXPECT_FALSE(r.base64);
  EXPECT_EQ(r.dimensions, 0);
  ASSERT_EQ(r.inputs.size(), 1u);
  ExpectEmbedInput(r.inputs[0], "prompt");
  EXPECT_EQ(r.inputs[0].prompt_text, "Why is the sky blue?");
  EXPECT_FALSE(r.inputs[0].sampling.temperature.has_value());
}

TEST_F(EmbeddingsRequestTest, OllamaLegacyEmptyPromptListsNone) {
  for (const json& prompt : {json(""), json(nullptr)}) {
    EXPECT_TRUE(
        Parse({{"model", "qwen3-vl"}, {"prompt", prompt}}, Api::kOllamaLegacy).inputs.empty())
        << prompt.dump();
  }
  EXPECT_TRUE(Parse({{"model", "qwen3-vl"}}, Api::kOllamaLegacy).inputs.empty());
}

TEST_F(EmbeddingsRequestTest, OllamaLegacyRefusals) {
  EXPECT_EQ(ErrorOf({{"prompt", "x"}}, "model", Api::kOllamaLegacy), "model: is required");
  EXPECT_EQ(ErrorOf({{"model", "llama3"}, {"prompt", "x"}}, "model", Api::kOllamaLegacy,
                    ErrorCode::kNotFound)
                .rfind("model: the model \"llama3\" does not exist", 0),
            0u);
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}, {"prompt", {"a", "b"}}}, "prompt", Api::kOllamaLegacy),
            "prompt: expected a string, got array");
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}, {"prompt", 7}}, "prompt", Api::kOllamaLegacy),
            "prompt: expected a string, got integer");
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}, {"input", "x"}}, "input", Api::kOllamaLegacy),
            "input: is /api/embed's field: /api/embeddings embeds \"prompt\" (one string)");
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}, {"prompt", "x"}, {"options", {{"bogus", 1}}}},
                    "options.bogus", Api::kOllamaLegacy),
            "options.bogus: unknown option \"bogus\"");
  EXPECT_EQ(ErrorOf({{"model", "qwen3-vl"}, {"prompt", "x"}, {"keep_alive", true}}, "keep_alive",
                    Api::kOllamaLegacy),
            "keep_alive: expected a duration (\"5m\") or a number of seconds, got boolean");
}

}  // namespace
}  // namespace qvl
