// The fixture of the /v1/responses parser's tests (responses_request_test.cc,
// responses_input_test.cc): the tiny model's policy, body builders and a description of
// parsed messages that two parses can be compared by.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/field_error.h"
#include "server/chat_request.h"
#include "server/chat_request_policy_for_test.h"
#include "server/responses_request.h"
#include "tiny_cases.h"

namespace qvl::testing {

inline const std::string kCases = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases";

inline const std::string& PhotoDataUrl() {
  static const std::string url =
      "data:image/jpeg;base64," + Base64(ReadFile(kCases + "/02_one_image_jpeg/images/photo.jpg"));
  return url;
}

inline nlohmann::json Body(nlohmann::json input) {
  return {{"model", "qwen3-vl"}, {"input", std::move(input)}};
}

inline nlohmann::json Text(const std::string& text) {
  return {{"type", "input_text"}, {"text", text}};
}

// A description of messages that differs wherever two lists would render or behave apart.
inline std::string Describe(const std::vector<ChatMessage>& messages) {
  std::string out;
  for (const ChatMessage& m : messages) {
    out += StrCat(m.role, m.content_is_string ? " string:" : " parts:");
    for (const ChatPart& p : m.parts) {
      out += p.kind == ChatPart::Kind::kImage ? " [image]" : StrCat(" [", p.text, "]");
    }
    for (const ChatToolCall& c : m.tool_calls) out += StrCat(" call ", c.name, c.arguments);
    out += "\n";
  }
  return out;
}

class ResponsesRequestTest : public ::testing::Test {
 protected:
  ResponsesRequest Parse(const nlohmann::json& body) { return ParseRaw(body.dump()); }
  ResponsesRequest ParseRaw(const std::string& text) {
    return ParseResponsesRequest(text, policy_, stored_);
  }
  ChatRequest ParseChat(const std::string& text) { return ParseChatRequest(text, policy_); }

  // The message of the FieldError the body raises; checks its code and field.
  std::string RawErrorOf(const std::string& text, const std::string& field,
                         ErrorCode code = ErrorCode::kInvalidArgument) {
    try {
      ParseResponsesRequest(text, policy_, stored_);
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

  ChatRequestPolicy policy_ = testing::TestChatPolicy();
  StoredConversation stored_;  // empty: the server keeps no responses
};

}  // namespace qvl::testing
