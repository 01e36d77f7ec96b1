#include "server/tokenize_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/field_error.h"
#include "server/chat_request_policy_for_test.h"
#include "server/request_checks_for_test.h"
#include "tiny_cases.h"

namespace qvl {
namespace {

class TokenizeRequestTest : public ::testing::Test {
 protected:
  TokenizeRequest Parse(const nlohmann::json& body) {
    return ParseTokenizeRequest(body.dump(), policy_);
  }

  // "FIELD: message" of the error, checking its field and code.
  template <typename ParseFn>
  std::string ErrorOf(ParseFn parse, const std::string& field,
                      ErrorCode code = ErrorCode::kInvalidArgument) {
    return testing::FieldErrorOf(parse, code, field);
  }
  std::string TokenizeError(const nlohmann::json& body, const std::string& field,
                            ErrorCode code = ErrorCode::kInvalidArgument) {
    return ErrorOf([&] { Parse(body); }, field, code);
  }
  std::string DetokenizeError(const std::string& body, const std::string& field) {
    return ErrorOf([&] { ParseDetokenizeRequest(body, policy_.model_names, 1000); }, field);
  }

  ChatRequestPolicy policy_ = testing::TestChatPolicy();
};

TEST_F(TokenizeRequestTest, LlamaServersContentAndVllmsPromptAreText) {
  TokenizeRequest r = Parse({{"content", "Hello <|im_end|>"},
                             {"add_special", true},
                             {"parse_special", true},
                             {"with_pieces", true}});
  EXPECT_EQ(r.text, "Hello <|im_end|>");
  EXPECT_TRUE(r.with_pieces);
  EXPECT_FALSE(r.token_strs);
  EXPECT_TRUE(r.chat.messages.empty());

  r = Parse({{"model", "qwen3-vl"},
             {"prompt", "Hi"},
             {"add_special_tokens", false},
             {"return_token_strs", true}});
  EXPECT_EQ(r.text, "Hi");
  EXPECT_EQ(r.model, "qwen3-vl");
  EXPECT_FALSE(r.with_pieces);
  EXPECT_TRUE(r.token_strs);
}

TEST_F(TokenizeRequestTest, MessagesAreReadAsTheChatRouteReadsThem) {
  const std::string photo = testing::DataUrl(
      std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/02_one_image_jpeg/images/photo.jpg");
  const nlohmann::json messages = {{{"role", "user"},
                                    {"content",
                                     {{{"type", "image_url"}, {"image_url", {{"url", photo}}}},
                                      {{"type", "text"}, {"text", "Describe this image."}}}}}};
  TokenizeRequest r = Parse({{"messages", messages}, {"max_pixels", 200000}});
  EXPECT_FALSE(r.text);
  EXPECT_TRUE(r.chat.add_generation_prompt);
  ASSERT_EQ(r.chat.messages.size(), 1u);
  ASSERT_EQ(r.chat.images.size(), 1u);
  EXPECT_EQ(r.chat.images[0].field, "messages[0].content[0].image_url.url");
  EXPECT_EQ(r.chat.image_budget.max_pixels, 200000);

  r = Parse({{"messages", messages}, {"add_generation_prompt", false}});
  EXPECT_FALSE(r.chat.add_generation_prompt);
  EXPECT_FALSE(r.chat.continue_final_message);
}

// As on /v1/chat/completions, so that a client can count a continuation's prompt.
TEST_F(TokenizeRequestTest, AFinalAssistantMessageCanBeContinued) {
  nlohmann::json messages = {{{"role", "user"}, {"content", "hi"}},
                             {{"role", "assistant"}, {"content", "Hello"}}};
  for (const nlohmann::json& flag : {nlohmann::json(false), nlohmann::json()}) {
    nlohmann::json body = {{"messages", messages}, {"continue_final_message", true}};
    if (!flag.is_null()) body["add_generation_prompt"] = flag;
    const TokenizeRequest r = Parse(body);
    EXPECT_TRUE(r.chat.continue_final_message) << body;
    EXPECT_FALSE(r.chat.add_generation_prompt) << body;
    EXPECT_EQ(r.chat.messages.size(), 2u);
  }
  EXPECT_EQ(TokenizeError({{"messages", messages},
                           {"continue_final_message", true},
                           {"add_generation_prompt", true}},
                          "continue_final_message"),
            "continue_final_message: cannot be combined with add_generation_prompt true (the "
            "final message is continued, no new turn is opened); leave add_generation_prompt "
            "out or set it to false");
  messages[1]["content"] = "";
  EXPECT_EQ(TokenizeError({{"messages", messages}, {"continue_final_message", true}},
                          "continue_final_message"),
            "continue_final_message: messages[1] has no content: there is nothing to continue");
}

TEST_F(TokenizeRequestTest, BadBodiesNameTheirField) {
  EXPECT_EQ(TokenizeError(nlohmann::json::object(), "messages"),
            "messages: is required: give the text as content (llama-server) or prompt (vLLM), "
            "or the conversation as messages");
  EXPECT_EQ(TokenizeError({{"content", "a"}, {"prompt", "b"}}, "prompt"),
            "prompt: give one of content, prompt and messages; this body also gives content");
  EXPECT_EQ(TokenizeError({{"content", 5}}, "content"), "content: expected a string, got integer");
  EXPECT_EQ(TokenizeError({{"content", "a"}, {"with_pieces", "yes"}}, "with_pieces"),
            "with_pieces: expected true or false, got string");
  EXPECT_EQ(TokenizeError({{"prompt", "a"}, {"add_special_tokens", 1}}, "add_special_tokens"),
            "add_special_tokens: expected true or false, got integer");
  EXPECT_NE(TokenizeError({{"content", "a"}, {"parse_special", false}}, "parse_special")
                .find("leave parse_special out or set it to true"),
            std::string::npos);
  EXPECT_EQ(
      TokenizeError({{"prompt", "a"}, {"add_generation_prompt", true}}, "add_generation_prompt"),
      "add_generation_prompt: applies to messages only, not to prompt");
  const nlohmann::json hi = {{{"role", "user"}, {"content", "hi"}}};
  EXPECT_EQ(
      TokenizeError({{"messages", hi}, {"continue_final_message", true}}, "continue_final_message"),
      "continue_final_message: the last message, messages[0], is a user one; only an assistant "
      "message can be continued");
  EXPECT_EQ(
      TokenizeError({{"messages", hi}, {"add_generation_prompt", "no"}}, "add_generation_prompt"),
      "add_generation_prompt: expected true or false, got string");
  // The chat request's own checks, with its messages.
  EXPECT_EQ(
      TokenizeError({{"messages", {{{"role", "wizard"}, {"content", "hi"}}}}}, "messages[0].role")
          .rfind("messages[0].role: ", 0),
      0u);
  TokenizeError({{"model", "gpt-4o"}, {"prompt", "a"}}, "model", ErrorCode::kNotFound);
}

TEST_F(TokenizeRequestTest, DetokenizeTakesIdsOfTheVocabulary) {
  const DetokenizeRequest r = ParseDetokenizeRequest(
      R"({"tokens": [0, 5, 999], "model": "qwen3-vl"})", policy_.model_names, 1000);
  EXPECT_EQ(r.tokens, (std::vector<int32_t>{0, 5, 999}));
  EXPECT_EQ(r.model, "qwen3-vl");
  EXPECT_EQ(DetokenizeError("{}", "tokens"), "tokens: is required");
  EXPECT_EQ(DetokenizeError(R"({"tokens": "1 2"})", "tokens"),
            "tokens: expected an array, got string");
  EXPECT_EQ(DetokenizeError(R"({"tokens": [1, "2"]})", "tokens[1]"),
            "tokens[1]: expected a token id (an integer), got string");
  EXPECT_EQ(DetokenizeError(R"({"tokens": [1.5]})", "tokens[0]"),
            "tokens[0]: expected a token id (an integer), got number");
  EXPECT_EQ(DetokenizeError(R"({"tokens": [1, -1]})", "tokens[1]"),
            "tokens[1]: token id -1 is not in the vocabulary (0 to 999)");
  EXPECT_EQ(DetokenizeError(R"({"tokens": [1000]})", "tokens[0]"),
            "tokens[0]: token id 1000 is not in the vocabulary (0 to 999)");
  EXPECT_EQ(DetokenizeError(R"({"tokens": [18446744073709551615]})", "tokens[0]"),
            "tokens[0]: token id 18446744073709551615 is not in the vocabulary (0 to 999)");
}

}  // namespace
}  // namespace qvl
