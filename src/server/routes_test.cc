#include "server/routes.h"

#include <gtest/gtest.h>

namespace qvl {
namespace {

TEST(RoutesTest, KnownRoutesAndTheirMethod) {
  EXPECT_EQ(FindRoute("/v1/chat/completions")->allow, "POST");
  EXPECT_EQ(FindRoute("/v1/completions")->allow, "POST");
  EXPECT_EQ(FindRoute("/v1/responses")->allow, "POST");
  EXPECT_EQ(FindRoute("/v1/messages")->allow, "POST");
  EXPECT_EQ(FindRoute("/v1/messages/count_tokens")->allow, "POST");
  EXPECT_EQ(FindRoute("/api/chat")->allow, "POST");
  EXPECT_EQ(FindRoute("/api/generate")->allow, "POST");
  EXPECT_EQ(FindRoute("/api/embeddings")->allow, "POST");
  EXPECT_EQ(FindRoute("/api/show")->allow, "POST");
  EXPECT_EQ(FindRoute("/api/tags")->allow, "GET");
  EXPECT_EQ(FindRoute("/api/ps")->allow, "GET");
  EXPECT_EQ(FindRoute("/api/version")->allow, "GET");
  EXPECT_EQ(FindRoute("/v1/models")->allow, "GET");
  EXPECT_EQ(FindRoute("/tokenize")->allow, "POST");
  EXPECT_EQ(FindRoute("/detokenize")->allow, "POST");
  EXPECT_EQ(FindRoute("/health")->allow, "GET");
  EXPECT_EQ(FindRoute("/metrics")->label, "/metrics");
  EXPECT_EQ(FindRoute("/props")->allow, "GET");
  EXPECT_EQ(FindRoute("/")->allow, "GET");
}

// llama-server's paths without /v1 are their /v1 route's: one label, one Allow.
TEST(RoutesTest, AliasesBelongToTheirRoute) {
  EXPECT_EQ(FindRoute("/chat/completions")->label, "/v1/chat/completions");
  EXPECT_EQ(FindRoute("/completions")->allow, "POST");
  EXPECT_EQ(FindRoute("/models")->label, "/v1/models");
  EXPECT_EQ(FindRoute("/v1/health")->label, "/health");
  EXPECT_EQ(PathsOf("/v1/chat/completions"),
            (std::vector<std::string>{"/v1/chat/completions", "/chat/completions"}));
  EXPECT_EQ(PathsOf("/v1/responses"), std::vector<std::string>{"/v1/responses"});
  EXPECT_FALSE(FindRoute("/responses"));
}

TEST(RoutesTest, ModelIdsShareOneLabelAndMayHoldSlashes) {
  const auto route = FindRoute("/v1/models/Qwen/Qwen3-VL-2B-Instruct");
  ASSERT_TRUE(route);
  EXPECT_EQ(route->label, "/v1/models/{id}");
  EXPECT_EQ(route->allow, "GET");
  EXPECT_EQ(ModelIdInPath("/v1/models/Qwen/Qwen3-VL-2B-Instruct"), "Qwen/Qwen3-VL-2B-Instruct");
  EXPECT_EQ(ModelIdInPath("/v1/models/"), "");
  EXPECT_EQ(ModelIdInPath("/v1/models"), "");
  EXPECT_EQ(ModelIdInPath("/v1/chat/completions"), "");
}

TEST(RoutesTest, ResponseIdsShareOneLabel) {
  const auto route = FindRoute("/v1/responses/resp_0123");
  ASSERT_TRUE(route);
  EXPECT_EQ(route->label, "/v1/responses/{id}");
  EXPECT_EQ(route->allow, "GET, DELETE");
  EXPECT_EQ(ResponseIdInPath("/v1/responses/resp_0123"), "resp_0123");
  EXPECT_EQ(ResponseIdInPath("/v1/responses/"), "");
  EXPECT_EQ(ResponseIdInPath("/v1/responses/resp_0123/input_items"), "");
  EXPECT_FALSE(FindRoute("/v1/responses/resp_0123/input_items"));
}

TEST(RoutesTest, OllamaPathsGetOllamaErrors) {
  EXPECT_EQ(ErrorShapeFor("/api/chat"), ErrorShape::kOllama);
  EXPECT_EQ(ErrorShapeFor("/api/pull"), ErrorShape::kOllama);
  EXPECT_EQ(ErrorShapeFor("/v1/chat/completions"), ErrorShape::kOpenAI);
  EXPECT_EQ(ErrorShapeFor("/apix"), ErrorShape::kOpenAI);
}

TEST(RoutesTest, AnthropicPathsGetAnthropicErrors) {
  EXPECT_EQ(ErrorShapeFor("/v1/messages"), ErrorShape::kAnthropic);
  EXPECT_EQ(ErrorShapeFor("/v1/messages/count_tokens"), ErrorShape::kAnthropic);
  EXPECT_EQ(ErrorShapeFor("/v1/messages/batches"), ErrorShape::kAnthropic);
  EXPECT_EQ(ErrorShapeFor("/v1/messagesx"), ErrorShape::kOpenAI);
}

TEST(ApiErrorTest, AnthropicShapeNamesTheTypeOfTheStatus) {
  const nlohmann::json body =
      ApiErrorJson(MakeApiError(ErrorCode::kInvalidArgument, "messages: is required", "messages"),
                   ErrorShape::kAnthropic);
  EXPECT_EQ(body, nlohmann::json::parse(R"({"type": "error", "error": {
      "type": "invalid_request_error", "message": "messages: is required"}})"));
  EXPECT_STREQ(AnthropicErrorType(401), "authentication_error");
  EXPECT_STREQ(AnthropicErrorType(404), "not_found_error");
  EXPECT_STREQ(AnthropicErrorType(413), "request_too_large");
  EXPECT_STREQ(AnthropicErrorType(503), "overloaded_error");
  EXPECT_STREQ(AnthropicErrorType(500), "api_error");
}

// A base URL ending in '/' joined with "/v1/..." or "/api/...": routed as the path meant.
TEST(RoutesTest, RunsOfSlashesMergeIntoOne) {
  EXPECT_EQ(MergedSlashes("//v1/chat/completions"), "/v1/chat/completions");
  EXPECT_EQ(MergedSlashes("/v1//models"), "/v1/models");
  EXPECT_EQ(MergedSlashes("///api///chat"), "/api/chat");
  EXPECT_EQ(MergedSlashes("//"), "/");
  EXPECT_EQ(MergedSlashes("/v1/models/Qwen//Qwen3-VL-2B-Instruct"),
            "/v1/models/Qwen/Qwen3-VL-2B-Instruct");
  EXPECT_EQ(MergedSlashes("/v1/chat/completions/"), "/v1/chat/completions/");
  EXPECT_EQ(MergedSlashes("/health"), "/health");
  EXPECT_EQ(MergedSlashes(""), "");
}

TEST(RoutesTest, OtherPathsAreNoRoute) {
  EXPECT_FALSE(FindRoute("/v1/models/"));
  EXPECT_FALSE(FindRoute("/v2/nothing"));
  EXPECT_FALSE(FindRoute("/assets/app.js"));
  EXPECT_FALSE(FindRoute("/v1/chat/completions/"));
}

}  // namespace
}  // namespace qvl
