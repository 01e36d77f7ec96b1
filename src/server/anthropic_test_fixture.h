// The fixture of the Anthropic Messages parser's tests (anthropic_request_test.cc,
// anthropic_input_test.cc): the tiny model's policy, the photo as base64, and parsers
// that report a FieldError's field and message.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/field_error.h"
#include "server/anthropic_request.h"
#include "server/chat_request.h"
#include "server/chat_request_policy_for_test.h"
#include "tiny_cases.h"

namespace qvl::testing {

inline const std::string& PhotoBytes() {
  static const std::string bytes = ReadFile(
      std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/02_one_image_jpeg/images/photo.jpg");
  return bytes;
}

// An image block holding the photo as base64.
inline nlohmann::json PhotoBlock() {
  return {{"type", "image"},
          {"source",
           {{"type", "base64"}, {"media_type", "image/jpeg"}, {"data", Base64(PhotoBytes())}}}};
}

// A body asking about `content` (a string or blocks) in one user message.
inline nlohmann::json Ask(nlohmann::json content) {
  return {{"model", "qwen3-vl"},
          {"max_tokens", 64},
          {"messages", {{{"role", "user"}, {"content", std::move(content)}}}}};
}

class AnthropicRequestTest : public ::testing::Test {
 protected:
  AnthropicRequest Parse(const nlohmann::json& body,
                         AnthropicBody kind = AnthropicBody::kMessages) {
    return ParseAnthropicRequest(body.dump(), policy_, kind);
  }
  AnthropicRequest ParseRaw(const std::string& text) {
    return ParseAnthropicRequest(text, policy_);
  }
  ChatRequest ParseChat(const std::string& text) { return ParseChatRequest(text, policy_); }

  // The message of the FieldError the body raises; checks its code and field.
  std::string RawErrorOf(const std::string& text, const std::string& field,
                         ErrorCode code = ErrorCode::kInvalidArgument) {
    try {
      ParseAnthropicRequest(text, policy_);
    } catch (const FieldError& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_EQ(e.field(), field) << e.what();
      return e.what();
    }
    return "no error";
  }
  std::string ErrorOf(const nlohmann::json& body, const std::string& field,
                      ErrorCode code = ErrorCode::kInvalidArgument) {
    return RawErrorOf(body.dump(), field, code);
  }

  ChatRequestPolicy policy_ = TestChatPolicy();
};

}  // namespace qvl::testing
