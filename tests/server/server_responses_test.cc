// POST /v1/responses over HTTP on 127.0.0.1 with the tiny fixture model: the fixture
// cases sent as Responses input give the golden answers, streamed as named events and
// not, and the errors name the field in the Responses shape.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

// A fixture's chat request as a Responses request; false when it holds a part the
// Responses API has no type for (videos).
bool ToResponses(const nlohmann::json& chat, nlohmann::json* out) {
  nlohmann::json input = nlohmann::json::array();
  for (const nlohmann::json& message : chat["messages"]) {
    nlohmann::json item = {{"role", message["role"]}};
    if (message["content"].is_string()) {
      item["content"] = message["content"];
    } else {
      item["content"] = nlohmann::json::array();
      for (const nlohmann::json& part : message["content"]) {
        if (part["type"] == "text") {
          item["content"].push_back({{"type", "input_text"}, {"text", part["text"]}});
        } else if (part["type"] == "image_url") {
          item["content"].push_back(
              {{"type", "input_image"}, {"image_url", part["image_url"]["url"]}});
        } else {
          return false;
        }
      }
    }
    input.push_back(std::move(item));
  }
  *out = {{"model", chat["model"]},
          {"input", std::move(input)},
          {"max_output_tokens", chat["max_tokens"]},
          {"temperature", 0}};
  return true;
}

class ServerResponsesTest : public SharedServerTest {
 protected:
  static HttpResult Respond(const nlohmann::json& body) {
    return PostJson(*harness_, "/v1/responses", body.dump());
  }

  static void ExpectError(const HttpResult& r, int status, const nlohmann::json& param,
                          const std::string& message_part) {
    EXPECT_EQ(r.status, status) << r.body;
    ASSERT_TRUE(r.json.is_object()) << r.body;
    EXPECT_EQ(r.json["error"]["param"], param) << r.body;
    EXPECT_NE(r.json["error"]["message"].get<std::string>().find(message_part), std::string::npos)
        << r.body;
  }
};

std::string ExpectedStatus(const TinyCase& c) {
  return c.finish_reason == "stop" ? "completed" : "incomplete";
}

TEST_F(ServerResponsesTest, NonStreamedAnswersEqualTheGoldens) {
  int cases = 0;
  for (const TinyCase& c : LoadTinyCases()) {
    nlohmann::json body;
    if (!ToResponses(c.request, &body)) continue;
    SCOPED_TRACE(c.name);
    ++cases;
    const HttpResult r = Respond(body);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.content_type, "application/json");
    const nlohmann::json& j = r.json;
    EXPECT_EQ(j["object"], "response");
    EXPECT_EQ(j["id"].get<std::string>().rfind("resp_", 0), 0u);
    EXPECT_EQ(j["model"], "qwen3-vl");
    EXPECT_EQ(j["status"], ExpectedStatus(c));
    ASSERT_EQ(j["output"].size(), 1u) << r.body;
    const nlohmann::json& message = j["output"][0];
    EXPECT_EQ(message["type"], "message");
    EXPECT_EQ(message["role"], "assistant");
    EXPECT_EQ(message["content"][0]["type"], "output_text");
    EXPECT_EQ(message["content"][0]["text"], c.greedy_text);
    EXPECT_EQ(j["usage"]["input_tokens"], c.prompt_tokens);
    EXPECT_EQ(j["usage"]["output_tokens"], c.completion_tokens);
    EXPECT_EQ(j["usage"]["total_tokens"], c.prompt_tokens + c.completion_tokens);
    EXPECT_TRUE(j["usage"]["input_tokens_details"]["cached_tokens"].is_number_integer());
    EXPECT_TRUE(j["timings"]["ttft_ms"].is_number());
    EXPECT_EQ(j["max_output_tokens"], body["max_output_tokens"]);
    EXPECT_EQ(j["temperature"], 0);
  }
  EXPECT_GE(cases, 5);
}

TEST_F(ServerResponsesTest, StreamedAnswersAreNamedEventsEndingInTheTerminalOne) {
  for (const TinyCase& c : LoadTinyCases()) {
    nlohmann::json body;
    if (!ToResponses(c.request, &body)) continue;
    SCOPED_TRACE(c.name);
    body["stream"] = true;
    const HttpResult r = Respond(body);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.content_type, "text/event-stream");
    EXPECT_EQ(r.body.find("[DONE]"), std::string::npos);
    const std::vector<NamedEvent> events = NamedEvents(r.body);
    ASSERT_GE(events.size(), 8u);
    std::string text;
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i].data["type"], events[i].name);
      EXPECT_EQ(events[i].data["sequence_number"], i);
      if (events[i].name == "response.output_text.delta") {
        text += events[i].data["delta"].get<std::string>();
      }
    }
    EXPECT_EQ(text, c.greedy_text);
    EXPECT_EQ(events.front().name, "response.created");
    EXPECT_EQ(events.front().data["response"]["status"], "in_progress");
    const NamedEvent& last = events.back();
    EXPECT_EQ(last.name, "response." + ExpectedStatus(c));
    EXPECT_EQ(last.data["response"]["output"][0]["content"][0]["text"], c.greedy_text);
    EXPECT_EQ(last.data["response"]["usage"]["input_tokens"], c.prompt_tokens);
    EXPECT_EQ(last.data["response"]["id"], events.front().data["response"]["id"]);
  }
}

// llama-server's return_progress as qvl.prompt_progress events, numbered with the rest,
// before the golden answer's; none without it; a whole answer unchanged.
TEST_F(ServerResponsesTest, ReturnProgressStreamsQvlPromptProgressEvents) {
  const TinyCase c = LoadTinyCase("02_one_image_jpeg");
  nlohmann::json body;
  ASSERT_TRUE(ToResponses(c.request, &body));
  body["stream"] = true;
  body["return_progress"] = true;
  const HttpResult r = Respond(body);
  ASSERT_EQ(r.status, 200) << r.body;
  const std::vector<NamedEvent> events = NamedEvents(r.body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events[0].name, "response.created");
  EXPECT_EQ(events[1].name, "response.in_progress");
  std::string text;
  int reports = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const nlohmann::json& e = events[i].data;
    EXPECT_EQ(e["sequence_number"], i);
    if (events[i].name == "qvl.prompt_progress") {
      EXPECT_GE(i, 2u);
      EXPECT_TRUE(text.empty()) << "progress after the answer began";
      EXPECT_EQ(e["prompt_progress"]["total"], c.prompt_tokens);
      EXPECT_LT(e["prompt_progress"]["processed"].get<int64_t>(), c.prompt_tokens);
      EXPECT_GE(e["prompt_progress"]["vision"].get<double>(), 0.0);
      EXPECT_LE(e["prompt_progress"]["vision"].get<double>(), 1.0);
      ++reports;
    } else if (events[i].name == "response.output_text.delta") {
      text += e["delta"].get<std::string>();
    }
  }
  EXPECT_GE(reports, 1);
  EXPECT_EQ(text, c.greedy_text);
  EXPECT_EQ(events.back().data["response"]["usage"]["input_tokens"], c.prompt_tokens);

  body.erase("return_progress");
  const HttpResult plain = Respond(body);
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_EQ(plain.body.find("prompt_progress"), std::string::npos);
  body["stream"] = false;
  body["return_progress"] = true;
  const HttpResult whole = Respond(body);
  ASSERT_EQ(whole.status, 200) << whole.body;
  EXPECT_EQ(whole.json["output"][0]["content"][0]["text"], c.greedy_text);
  body["return_progress"] = "yes";
  ExpectError(Respond(body), 400, "return_progress", "expected true or false");
}

TEST_F(ServerResponsesTest, ErrorsNameTheFieldInTheResponsesShape) {
  const nlohmann::json text = {{"input", "hi"}, {"max_output_tokens", 2}};
  nlohmann::json body = text;
  body["input"] = {{{"role", "user"},
                    {"content",
                     {{{"type", "input_image"}, {"image_url", "data:image/png;base64,AAAA"}},
                      {{"type", "input_text"}, {"text", "What is this?"}}}}}};
  const HttpResult broken = Respond(body);
  EXPECT_EQ(broken.status, 400) << broken.body;
  EXPECT_EQ(broken.json["error"]["param"], "input[0].content[0].image_url") << broken.body;

  body = text;
  body["previous_response_id"] = "resp_1";
  ExpectError(Respond(body), 400, "previous_response_id", "no stored response \"resp_1\"");
  body = text;
  body["max_output_tokens"] = 0;
  ExpectError(Respond(body), 400, "max_output_tokens", "max_output_tokens");
  body = text;
  body["max_output_tokens"] = 100000;
  ExpectError(Respond(body), 400, "max_output_tokens", "max_output_tokens");
  body = text;
  body["input"] = nlohmann::json::array();
  EXPECT_EQ(Respond(body).status, 400);
  ExpectError(Respond(nlohmann::json::object()), 400, "input", "required");
  body = text;
  std::string long_input;
  for (int i = 0; i < 5000; ++i) long_input += "hello ";
  body["input"] = long_input;
  ExpectError(Respond(body), 400, "input", "context");

  ExpectError(Get(*harness_, "/v1/responses/resp_0123"), 404, nullptr,
              "no stored response \"resp_0123\"");
  const std::string counted = "qvl_http_responses_total{route=\"/v1/responses/{id}\",code=\"404\"}";
  const std::string metrics = MetricsHolding(*harness_, counted);
  EXPECT_NE(metrics.find(counted), std::string::npos);
  EXPECT_NE(metrics.find("qvl_http_responses_total{route=\"/v1/responses\",code=\"400\"}"),
            std::string::npos);
}

TEST_F(ServerResponsesTest, StoredResponsesAreContinuedRetrievedAndDeleted) {
  // Long enough to fill whole KV pages, which the prefix cache keeps.
  std::string question = "Name a colour.";
  for (int i = 0; i < 20; ++i) question += " Any colour will do.";
  const nlohmann::json first_body = {
      {"input", question}, {"max_output_tokens", 4}, {"temperature", 0}};
  const HttpResult first = Respond(first_body);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.json["store"], true);
  const std::string id = first.json["id"];
  const HttpResult stored = Get(*harness_, "/v1/responses/" + id);
  ASSERT_EQ(stored.status, 200) << stored.body;
  EXPECT_EQ(stored.json, first.json);

  // Continuing it gives the prompt and answer of sending the whole conversation.
  nlohmann::json next = {{"input", "And another?"},
                         {"previous_response_id", id},
                         {"max_output_tokens", 4},
                         {"temperature", 0}};
  const HttpResult continued = Respond(next);
  ASSERT_EQ(continued.status, 200) << continued.body;
  EXPECT_EQ(continued.json["previous_response_id"], id);
  nlohmann::json whole = {{"input", {{{"role", "user"}, {"content", question}}}},
                          {"max_output_tokens", 4},
                          {"temperature", 0}};
  for (const nlohmann::json& item : first.json["output"]) whole["input"].push_back(item);
  whole["input"].push_back({{"role", "user"}, {"content", "And another?"}});
  const HttpResult resent = Respond(whole);
  ASSERT_EQ(resent.status, 200) << resent.body;
  EXPECT_EQ(continued.json["usage"]["input_tokens"], resent.json["usage"]["input_tokens"]);
  EXPECT_GT(continued.json["usage"]["input_tokens"], first.json["usage"]["input_tokens"]);
  EXPECT_GT(continued.json["usage"]["input_tokens_details"]["cached_tokens"], 0);
  EXPECT_EQ(continued.json["output"][0]["content"][0]["text"],
            resent.json["output"][0]["content"][0]["text"]);

  // A streamed response is kept as its terminal event carries it.
  next["previous_response_id"] = continued.json["id"];
  next["stream"] = true;
  const HttpResult streamed = Respond(next);
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  const nlohmann::json terminal = NamedEvents(streamed.body).back().data["response"];
  EXPECT_EQ(Get(*harness_, "/v1/responses/" + terminal["id"].get<std::string>()).json, terminal);

  httplib::Client client = harness_->Client();
  const httplib::Result deleted = client.Delete("/v1/responses/" + id);
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->status, 200);
  EXPECT_EQ(nlohmann::json::parse(deleted->body),
            (nlohmann::json{{"id", id}, {"object", "response"}, {"deleted", true}}));
  ExpectError(Get(*harness_, "/v1/responses/" + id), 404, nullptr, "no stored response");
  const httplib::Result again = client.Delete("/v1/responses/" + id);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 404);
  next["previous_response_id"] = id;
  ExpectError(Respond(next), 400, "previous_response_id", "was deleted");

  nlohmann::json unstored = first_body;
  unstored["store"] = false;
  const HttpResult kept_not = Respond(unstored);
  ASSERT_EQ(kept_not.status, 200) << kept_not.body;
  EXPECT_EQ(kept_not.json["store"], false);
  EXPECT_EQ(Get(*harness_, "/v1/responses/" + kept_not.json["id"].get<std::string>()).status, 404);
}

// A stored conversation whose first turn had an image (a data URL) continued with
// previous_response_id: the image is in the second turn's prompt again, as when the
// whole conversation is sent, and the first turn's KV (the image's included) is reused.
TEST_F(ServerResponsesTest, AStoredConversationWithAnImageIsContinuedWithIt) {
  const TinyCase c = LoadTinyCase("02_one_image_jpeg");
  nlohmann::json first_body;
  ASSERT_TRUE(ToResponses(c.request, &first_body));
  const HttpResult first = Respond(first_body);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.json["output"][0]["content"][0]["text"], c.greedy_text);
  ASSERT_EQ(first.json["timings"]["images"].size(), 1u) << first.body;

  const nlohmann::json follow_up = {{"role", "user"}, {"content", "And the colours?"}};
  const HttpResult continued = Respond({{"input", {follow_up}},
                                        {"previous_response_id", first.json["id"]},
                                        {"max_output_tokens", 4},
                                        {"temperature", 0}});
  ASSERT_EQ(continued.status, 200) << continued.body;
  nlohmann::json whole = {
      {"input", first_body["input"]}, {"max_output_tokens", 4}, {"temperature", 0}};
  for (const nlohmann::json& item : first.json["output"]) whole["input"].push_back(item);
  whole["input"].push_back(follow_up);
  const HttpResult resent = Respond(whole);
  ASSERT_EQ(resent.status, 200) << resent.body;

  const nlohmann::json& image = continued.json["timings"]["images"];
  ASSERT_EQ(image.size(), 1u) << continued.body;
  EXPECT_EQ(image[0]["tokens"], 80);
  EXPECT_EQ(image[0]["grid_thw"], (nlohmann::json{1, 16, 20}));
  EXPECT_EQ(continued.json["usage"]["input_tokens"], resent.json["usage"]["input_tokens"]);
  EXPECT_GT(continued.json["usage"]["input_tokens"].get<int64_t>(),
            c.prompt_tokens + c.completion_tokens);
  // The image's encoding is reused, and the KV of the first turn's prompt in whole pages
  // of 16 tokens: at least 5 of its 94 tokens' 6 pages (76 of the image's 80 tokens; the
  // sixth page holds the first answer's tokens, which the history tokenizes anew).
  EXPECT_EQ(image[0]["cached"], true);
  EXPECT_GE(continued.json["usage"]["input_tokens_details"]["cached_tokens"].get<int64_t>(), 80)
      << continued.body;
  EXPECT_EQ(continued.json["output"][0]["content"][0]["text"],
            resent.json["output"][0]["content"][0]["text"]);
}

TEST(ServerResponsesStoreTest, AServerThatKeepsNoneSaysSo) {
  HarnessOptions options = DefaultHarnessOptions();
  options.server.response_store.max_bytes = 0;
  ServerHarness harness(options);
  const HttpResult r = PostJson(harness, "/v1/responses",
                                R"({"input": "hi", "max_output_tokens": 2, "store": true})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["store"], false);
  const HttpResult next =
      PostJson(harness, "/v1/responses",
               nlohmann::json{{"input", "hi"}, {"previous_response_id", r.json["id"]}}.dump());
  EXPECT_EQ(next.status, 400);
  EXPECT_EQ(next.json["error"]["param"], "previous_response_id");
  EXPECT_NE(next.json["error"]["message"].get<std::string>().find("--response-store-mb 0"),
            std::string::npos);
}

}  // namespace
}  // namespace qvl::testing
