// The HTTP API over real sockets on 127.0.0.1 with the tiny fixture model: golden
// answers streamed and not, and every error path with its exact status and error object.
#include <gtest/gtest.h>

#include <string>

#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

class ServerHttpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { harness_ = new ServerHarness(); }
  static void TearDownTestSuite() {
    delete harness_;
    harness_ = nullptr;
  }

  static HttpResult Chat(const nlohmann::json& body) {
    return PostJson(*harness_, "/v1/chat/completions", body.dump());
  }

  // Checks status and the OpenAI error object.
  static void ExpectError(const HttpResult& r, int status, const std::string& message,
                          const nlohmann::json& param, const std::string& type,
                          const std::string& code) {
    EXPECT_EQ(r.status, status) << r.body;
    ASSERT_TRUE(r.json.is_object()) << r.body;
    const nlohmann::json& e = r.json["error"];
    EXPECT_EQ(e["message"], message);
    EXPECT_EQ(e["param"], param);
    EXPECT_EQ(e["type"], type);
    EXPECT_EQ(e["code"], code);
  }

  static nlohmann::json TextRequest(const std::string& text) {
    return {{"model", "qwen3-vl"},
            {"messages", {{{"role", "user"}, {"content", text}}}},
            {"max_tokens", 4},
            {"temperature", 0}};
  }

  static ServerHarness* harness_;
};

ServerHarness* ServerHttpTest::harness_ = nullptr;

TEST_F(ServerHttpTest, NonStreamedAnswersEqualTheGoldens) {
  for (const TinyCase& c : LoadTinyCases()) {
    SCOPED_TRACE(c.name);
    const HttpResult r = Chat(c.request);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.content_type, "application/json");
    const nlohmann::json& j = r.json;
    EXPECT_EQ(j["object"], "chat.completion");
    EXPECT_EQ(j["model"], "qwen3-vl");
    EXPECT_EQ(j["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
    EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
    EXPECT_EQ(j["choices"][0]["message"]["content"], c.greedy_text);
    EXPECT_EQ(j["choices"][0]["finish_reason"], c.finish_reason);
    EXPECT_EQ(j["usage"]["prompt_tokens"], c.prompt_tokens);
    EXPECT_EQ(j["usage"]["completion_tokens"], c.completion_tokens);
    EXPECT_EQ(j["usage"]["total_tokens"], c.prompt_tokens + c.completion_tokens);
    EXPECT_TRUE(j["usage"]["prompt_tokens_details"]["cached_tokens"].is_number_integer());
    const nlohmann::json& t = j["timings"];
    for (const char* key : {"preprocess_ms", "vision_encode_ms", "prefill_ms", "decode_ms",
                            "ttft_ms", "decode_tokens_per_s"}) {
      EXPECT_TRUE(t[key].is_number()) << key;
    }
    EXPECT_EQ(t["images"].size(),
              c.request.dump().find("image_url") == std::string::npos ? 0u : t["images"].size());
  }
}

TEST_F(ServerHttpTest, ReportsTheEffectiveImageGrid) {
  const TinyCase c = LoadTinyCase("02_one_image_jpeg");
  const HttpResult r = Chat(c.request);
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json& image = r.json["timings"]["images"][0];
  EXPECT_EQ(image["width"], 320);
  EXPECT_EQ(image["height"], 240);
  EXPECT_EQ(image["resized_width"], 320);
  EXPECT_EQ(image["resized_height"], 256);
  EXPECT_EQ(image["grid_thw"], (nlohmann::json{1, 16, 20}));
  EXPECT_EQ(image["tokens"], 80);
}

TEST_F(ServerHttpTest, StreamedAnswersEqualTheGoldens) {
  for (const TinyCase& c : LoadTinyCases()) {
    SCOPED_TRACE(c.name);
    nlohmann::json body = c.request;
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
    const HttpResult r = Chat(body);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.content_type, "text/event-stream");
    const std::vector<nlohmann::json> events = SseEvents(r.body);
    ASSERT_GE(events.size(), 4u);
    EXPECT_EQ(events.front()["choices"][0]["delta"]["role"], "assistant");
    EXPECT_EQ(StreamedText(events), c.greedy_text);
    EXPECT_EQ(events.back(), "[DONE]");
    const nlohmann::json& usage_chunk = events[events.size() - 2];
    EXPECT_EQ(usage_chunk["choices"], nlohmann::json::array());
    EXPECT_EQ(usage_chunk["usage"]["prompt_tokens"], c.prompt_tokens);
    EXPECT_EQ(usage_chunk["usage"]["completion_tokens"], c.completion_tokens);
    const nlohmann::json& finish_chunk = events[events.size() - 3];
    EXPECT_EQ(finish_chunk["choices"][0]["finish_reason"], c.finish_reason);
    for (size_t i = 0; i + 3 < events.size(); ++i) {
      EXPECT_TRUE(events[i]["choices"][0]["finish_reason"].is_null());
      EXPECT_EQ(events[i]["object"], "chat.completion.chunk");
      EXPECT_EQ(events[i]["id"], events[0]["id"]);
    }
  }
}

TEST_F(ServerHttpTest, LogprobsInOpenAiFormat) {
  nlohmann::json body = LoadTinyCase("01_text_only").request;
  body["logprobs"] = true;
  body["top_logprobs"] = 3;
  const HttpResult r = Chat(body);
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json& content = r.json["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 16u);
  std::string joined;
  for (const nlohmann::json& token : content) {
    ASSERT_EQ(token["top_logprobs"].size(), 3u);
    // Greedy: the chosen token is the most likely one.
    EXPECT_EQ(token["top_logprobs"][0]["bytes"], token["bytes"]);
    EXPECT_LE(token["logprob"].get<double>(), 0.0);
    for (const nlohmann::json& b : token["bytes"])
      joined.push_back(static_cast<char>(b.get<int>()));
  }
  EXPECT_EQ(joined, r.json["choices"][0]["message"]["content"].get<std::string>());
}

TEST_F(ServerHttpTest, HealthModelsAndMetrics) {
  const HttpResult health = Get(*harness_, "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.json, (nlohmann::json{{"status", "ok"}, {"model", "tiny-qwen3vl"}}));
  const HttpResult models = Get(*harness_, "/v1/models");
  ASSERT_EQ(models.status, 200);
  EXPECT_EQ(models.json["object"], "list");
  ASSERT_EQ(models.json["data"].size(), 2u);
  EXPECT_EQ(models.json["data"][0]["id"], "tiny-qwen3vl");
  EXPECT_EQ(models.json["data"][1]["id"], "qwen3-vl");
  EXPECT_EQ(models.json["data"][0]["object"], "model");
  ASSERT_EQ(Chat(TextRequest("hello")).status, 200);
  const HttpResult metrics = Get(*harness_, "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.content_type, "text/plain; version=0.0.4; charset=utf-8");
  for (const char* name :
       {"qvl_queue_depth", "qvl_active_sequences", "qvl_prompt_tokens_total",
        "qvl_completion_tokens_total", "qvl_kv_cache_usage_ratio", "qvl_image_cache_hits_total",
        "process_resident_memory_bytes", "qvl_time_to_first_token_seconds_count",
        "qvl_time_per_output_token_seconds_count", "qvl_model_ready"}) {
    EXPECT_GE(MetricValue(metrics.body, name), 0) << name;
  }
  EXPECT_GE(MetricValue(metrics.body, "qvl_completion_tokens_total"), 4);
  EXPECT_NE(
      metrics.body.find("qvl_http_responses_total{route=\"/v1/chat/completions\",code=\"200\"}"),
      std::string::npos);
}

TEST_F(ServerHttpTest, ServesTheWebPage) {
#ifndef QVL_HAVE_WEB_ASSETS
  GTEST_SKIP() << "built without the web page (-DQVL_WEB=OFF)";
#endif
  httplib::Client client = harness_->Client();
  const httplib::Result page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type").rfind("text/html", 0), 0u);
  EXPECT_EQ(page->get_header_value("Cache-Control"), "no-cache");
  EXPECT_NE(page->body.find("<html"), std::string::npos);
  const httplib::Result missing = client.Get("/assets/no-such-file.js");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

TEST_F(ServerHttpTest, CorsPreflightAndHeaders) {
  httplib::Client client = harness_->Client();
  const httplib::Result preflight = client.Options(
      "/v1/chat/completions",
      {{"Origin", "http://example.test"}, {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(preflight);
  EXPECT_EQ(preflight->status, 204);
  EXPECT_EQ(preflight->get_header_value("Access-Control-Allow-Origin"), "*");
  EXPECT_NE(preflight->get_header_value("Access-Control-Allow-Headers").find("Authorization"),
            std::string::npos);
  const httplib::Result models = client.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(models->get_header_value("Access-Control-Allow-Origin"), "*");
}

TEST_F(ServerHttpTest, BadRequestsAre400WithTheField) {
  ExpectError(PostJson(*harness_, "/v1/chat/completions", "{\"model\": "), 400,
              "malformed JSON in the request body: parse error at line 1, column 11: syntax "
              "error while parsing value - unexpected end of input; expected '[', '{', or a "
              "literal",
              nullptr, "invalid_request_error", "invalid_value");
  nlohmann::json body = TextRequest("hi");
  body["temperature"] = "warm";
  ExpectError(Chat(body), 400, "temperature: expected a number, got string", "temperature",
              "invalid_request_error", "invalid_value");
  body = TextRequest("hi");
  body["n"] = 3;
  ExpectError(Chat(body), 400, "n: only n = 1 is supported, got 3", "n", "invalid_request_error",
              "invalid_value");
  body = TextRequest("hi");
  body["messages"][0]["content"] = {
      {{"type", "image_url"}, {"image_url", {{"url", "data:image/tiff;base64,SUkqAAgAAAA="}}}}};
  ExpectError(Chat(body), 400,
              "messages[0].content[0].image_url.url: image 1 is TIFF, which qvl does not read; "
              "send JPEG, PNG, WebP, GIF or BMP",
              "messages[0].content[0].image_url.url", "invalid_request_error", "invalid_value");
}

TEST_F(ServerHttpTest, BrokenImageIs400NamingThePart) {
  // A JPEG signature followed by garbage: found only when the engine decodes it.
  nlohmann::json body = TextRequest("hi");
  body["messages"][0]["content"] = {
      {{"type", "text"}, {"text", "look"}},
      {{"type", "image_url"},
       {"image_url", {{"url", "data:image/jpeg;base64," + Base64("\xff\xd8\xff\xe0garbage!")}}}}};
  ExpectError(Chat(body), 400,
              "messages[0].content[1].image_url.url: image 1: the JPEG data is truncated",
              "messages[0].content[1].image_url.url", "invalid_request_error", "invalid_value");
}

TEST_F(ServerHttpTest, TooManyImagesIs400) {
  const std::string url = DataUrl(std::string(QVL_TEST_DATA) +
                                  "/tiny-qwen3vl/cases/02_one_image_jpeg/images/photo.jpg");
  nlohmann::json content = nlohmann::json::array();
  for (int i = 0; i < 5; ++i)
    content.push_back({{"type", "image_url"}, {"image_url", {{"url", url}}}});
  nlohmann::json body = TextRequest("");
  body["messages"][0]["content"] = content;
  ExpectError(Chat(body), 400,
              "messages[0].content[4].image_url.url: too many images: this server accepts at "
              "most 4 per request",
              "messages[0].content[4].image_url.url", "invalid_request_error", "invalid_value");
}

TEST_F(ServerHttpTest, UnknownRoutesAndModelsAre404) {
  ExpectError(Get(*harness_, "/v2/nothing"), 404, "no route GET /v2/nothing", nullptr,
              "invalid_request_error", "not_found");
  ExpectError(PostJson(*harness_, "/v1/completions", "{}"), 404, "no route POST /v1/completions",
              nullptr, "invalid_request_error", "not_found");
  nlohmann::json body = TextRequest("hi");
  body["model"] = "gpt-4o";
  ExpectError(Chat(body), 404,
              "model: the model \"gpt-4o\" does not exist; this server serves \"tiny-qwen3vl\", "
              "\"qwen3-vl\"",
              "model", "invalid_request_error", "model_not_found");
}

TEST_F(ServerHttpTest, OversizedBodiesAndImagesAre413) {
  const std::string big(9 << 20, 'x');
  ExpectError(PostJson(*harness_, "/v1/chat/completions", big), 413,
              "the request body is over the limit of 8 MiB (the operator sets it with "
              "--max-body-mb)",
              nullptr, "invalid_request_error", "too_large");
  // Chunked, so there is no Content-Length to check up front.
  httplib::Client client = harness_->Client();
  size_t sent = 0;
  const httplib::Result chunked = client.Post(
      "/v1/chat/completions",
      [&](size_t, httplib::DataSink& sink) {
        const std::string block(1 << 20, ' ');
        if (sent >= (10u << 20)) {
          sink.done();
          return true;
        }
        sent += block.size();
        return sink.write(block.data(), block.size());
      },
      "application/json");
  // The server may hang up while the client is still sending; it must never accept it.
  if (chunked) {
    EXPECT_EQ(chunked->status, 413);
  }

  const std::string large_image(1100 * 1024, 'y');
  nlohmann::json body = TextRequest("hi");
  body["messages"][0]["content"] = {
      {{"type", "image_url"},
       {"image_url", {{"url", "data:image/png;base64," + Base64(large_image)}}}}};
  ExpectError(Chat(body), 413,
              "messages[0].content[0].image_url.url: the image is 1.1 MiB, over the limit of 1 "
              "MiB per image",
              "messages[0].content[0].image_url.url", "invalid_request_error", "too_large");
}

TEST_F(ServerHttpTest, PromptOverTheContextIsRefusedNot500) {
  std::string long_text;
  for (int i = 0; i < 5000; ++i) long_text += " 7";
  ExpectError(Chat(TextRequest(long_text)), 400,
              "messages: the prompt is 10008 tokens (0 of them image tokens) but the context "
              "holds 4096 tokens for prompt and answer; send fewer or smaller images, or shorten "
              "the conversation",
              "messages", "invalid_request_error", "invalid_value");
}

TEST_F(ServerHttpTest, MaxTokensBeyondTheContextIs400WithTheNumbers) {
  // "hi" renders as a 9-token prompt.
  nlohmann::json body = TextRequest("hi");
  body["max_tokens"] = 4088;
  ExpectError(Chat(body), 400,
              "max_tokens: the prompt is 9 tokens (0 of them image tokens) and max_tokens asks "
              "for 4088, but the context holds 4096 tokens for prompt and answer; ask for at most "
              "4087",
              "max_tokens", "invalid_request_error", "invalid_value");
  body.erase("max_tokens");
  body["max_completion_tokens"] = 5000;
  ExpectError(Chat(body), 400,
              "max_completion_tokens: asks for 5000 tokens, but the context holds 4096 tokens "
              "for prompt and answer together",
              "max_completion_tokens", "invalid_request_error", "invalid_value");
  // At the boundary: 2040 x " 7" is a 4088-token prompt, so 8 more fit and 9 do not.
  std::string long_text;
  for (int i = 0; i < 2040; ++i) long_text += " 7";
  body = TextRequest(long_text);
  body["max_tokens"] = 9;
  ExpectError(Chat(body), 400,
              "max_tokens: the prompt is 4088 tokens (0 of them image tokens) and max_tokens asks "
              "for 9, but the context holds 4096 tokens for prompt and answer; ask for at most 8",
              "max_tokens", "invalid_request_error", "invalid_value");
  body["max_tokens"] = 8;
  const HttpResult fits = Chat(body);
  EXPECT_EQ(fits.status, 200) << fits.body;
}

TEST_F(ServerHttpTest, TextThatCannotFitIsRefusedBeforeTokenizing) {
  // 4096 tokens x 128 bytes (Qwen's longest token) x 3 (NFC's largest shrink) = 1572864
  // bytes: the message names that bound, which only the check before tokenizing knows.
  const HttpResult r = Chat(TextRequest(std::string(2000000, 'a')));
  ExpectError(r, 400,
              "messages: the text is 2000000 bytes, more than the context of 4096 tokens can "
              "hold (at most 1572864 bytes: 384 per token at the most); shorten the conversation",
              "messages", "invalid_request_error", "invalid_value");
}

TEST_F(ServerHttpTest, ImageDetailPicksTheImageBudget) {
  // 2560 x 1920 would be 4800 image tokens; the server cuts it to its budget for `detail`.
  const std::string url = DataUrl(std::string(QVL_TEST_DATA) + "/images/limits/2560x1920.png");
  auto grid_for = [&](const char* detail) {
    nlohmann::json image_url = {{"url", url}};
    if (detail != nullptr) image_url["detail"] = detail;
    nlohmann::json body = TextRequest("");
    body["messages"][0]["content"] = {{{"type", "image_url"}, {"image_url", image_url}}};
    const HttpResult r = Chat(body);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.json["timings"]["images"][0];
  };
  // No detail and "auto": the default cap of 1280 tokens.
  nlohmann::json image = grid_for(nullptr);
  EXPECT_EQ(image["grid_thw"], (nlohmann::json{1, 60, 82}));
  EXPECT_EQ(image["tokens"], 1230);
  EXPECT_EQ(grid_for("auto")["grid_thw"], (nlohmann::json{1, 60, 82}));
  // "low": 256 tokens.
  image = grid_for("low");
  EXPECT_EQ(image["resized_width"], 576);
  EXPECT_EQ(image["resized_height"], 416);
  EXPECT_EQ(image["tokens"], 234);
  // "high": the operator's maximum (the harness sets 2048 tokens).
  image = grid_for("high");
  EXPECT_EQ(image["grid_thw"], (nlohmann::json{1, 78, 104}));
  EXPECT_EQ(image["tokens"], 2028);
}

TEST(ServerLifecycleTest, HealthIs503WhileLoadingAndChatWaits) {
  HarnessOptions options = DefaultHarnessOptions();
  options.load_model = false;
  ServerHarness harness(options);
  const HttpResult health = Get(harness, "/health");
  EXPECT_EQ(health.status, 503);
  EXPECT_EQ(health.json["status"], "loading");
  const HttpResult chat = PostJson(harness, "/v1/chat/completions", "{}");
  EXPECT_EQ(chat.status, 503);
  EXPECT_EQ(chat.json["error"]["message"], "the model is still loading; retry in a few seconds");
  EXPECT_EQ(chat.json["error"]["type"], "server_error");
}

TEST(ServerAuthTest, ApiKeyGuardsEveryRouteButHealth) {
  HarnessOptions options = DefaultHarnessOptions();
  options.server.api_key = "s3cret-key";
  ServerHarness harness(options);
  const nlohmann::json body = {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                               {"max_tokens", 2}};
  for (const httplib::Headers& headers :
       {httplib::Headers{}, httplib::Headers{{"Authorization", "Bearer wrong-key!"}},
        httplib::Headers{{"Authorization", "s3cret-key"}}}) {
    for (const HttpResult& r :
         {PostJson(harness, "/v1/chat/completions", body.dump(), headers),
          Get(harness, "/v1/models", headers), Get(harness, "/metrics", headers)}) {
      EXPECT_EQ(r.status, 401) << r.body;
      EXPECT_EQ(r.json["error"]["message"],
                "missing or wrong API key; send \"Authorization: Bearer <key>\"");
      EXPECT_EQ(r.json["error"]["type"], "authentication_error");
      EXPECT_EQ(r.json["error"]["code"], "invalid_api_key");
    }
  }
  EXPECT_EQ(Get(harness, "/health").status, 200);
  const httplib::Headers good = {{"Authorization", "Bearer s3cret-key"}};
  EXPECT_EQ(PostJson(harness, "/v1/chat/completions", body.dump(), good).status, 200);
  EXPECT_EQ(Get(harness, "/v1/models", good).status, 200);
  EXPECT_EQ(Get(harness, "/metrics", good).status, 200);
}

TEST(ServerAuthTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
}

}  // namespace
}  // namespace qvl::testing
