// Amazon SageMaker's container contract over HTTP with the tiny model: POST /invocations
// answers each generation API's body as that API's own route does, and GET /ping is the
// health check.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

class ServerInvocationsTest : public SharedServerTest {
 protected:
  static HttpResult Invoke(const nlohmann::json& body) { return Post("/invocations", body); }
};

TEST_F(ServerInvocationsTest, AChatBodyIsAChatCompletion) {
  const TinyCase c = LoadTinyCase("02_one_image_jpeg");
  const HttpResult r = Invoke(c.request);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["object"], "chat.completion");
  EXPECT_EQ(r.json["choices"][0]["message"]["content"], c.greedy_text);
  EXPECT_EQ(r.json["usage"]["prompt_tokens"], c.prompt_tokens);

  nlohmann::json streamed = c.request;
  streamed["stream"] = true;
  const HttpResult s = Invoke(streamed);
  ASSERT_EQ(s.status, 200) << s.body;
  const std::vector<nlohmann::json> events = SseEvents(s.body);
  EXPECT_EQ(StreamedText(events), c.greedy_text);
  EXPECT_EQ(events.back(), "[DONE]");
}

TEST_F(ServerInvocationsTest, APromptBodyIsATextCompletion) {
  const nlohmann::json body = {{"prompt", "The sky is"}, {"max_tokens", 6}, {"temperature", 0}};
  const HttpResult direct = Post("/v1/completions", body);
  const HttpResult r = Invoke(body);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(direct.status, 200) << direct.body;
  EXPECT_EQ(r.json["object"], "text_completion");
  EXPECT_EQ(r.json["choices"][0]["text"], direct.json["choices"][0]["text"]);
}

TEST_F(ServerInvocationsTest, AnInputBodyIsAnEmbeddingsRequest) {
  const nlohmann::json body = {{"input", {"a red square", "a blue circle"}}};
  const HttpResult direct = Post("/v1/embeddings", body);
  const HttpResult r = Invoke(body);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(direct.status, 200) << direct.body;
  ASSERT_EQ(r.json["data"].size(), 2u);
  EXPECT_EQ(r.json["data"], direct.json["data"]);
}

// messages decides wherever it stands; keys inside values do not count.
TEST_F(ServerInvocationsTest, MessagesWinsAndOnlyTopLevelKeysCount) {
  const nlohmann::json body = {{"prompt", "ignored"},
                               {"metadata", {{"input", "x"}}},
                               {"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                               {"max_tokens", 2}};
  const HttpResult r = Invoke(body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["object"], "chat.completion");
}

TEST_F(ServerInvocationsTest, ABodyOfNoApiIsA400NamingWhatItNeeds) {
  const HttpResult none = Invoke({{"metadata", {{"messages", 1}}}, {"max_tokens", 2}});
  EXPECT_EQ(none.status, 400) << none.body;
  EXPECT_EQ(none.json["error"]["param"], "messages");
  EXPECT_NE(none.json["error"]["message"].get<std::string>().find("prompt"), std::string::npos);

  // Not JSON: the chat route's own message.
  const HttpResult broken = PostJson(*harness_, "/invocations", "{\"messages\": [");
  const HttpResult chat = PostJson(*harness_, "/v1/chat/completions", "{\"messages\": [");
  EXPECT_EQ(broken.status, 400) << broken.body;
  EXPECT_EQ(broken.json["error"], chat.json["error"]);

  const HttpResult get = Get(*harness_, "/invocations");
  EXPECT_EQ(get.status, 405) << get.body;
}

TEST_F(ServerInvocationsTest, PingIsTheHealthCheck) {
  const HttpResult ping = Get(*harness_, "/ping");
  ASSERT_EQ(ping.status, 200) << ping.body;
  EXPECT_EQ(ping.json["status"], "ok");
}

}  // namespace
}  // namespace qvl::testing
