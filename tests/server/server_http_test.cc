// The HTTP API over real sockets on 127.0.0.1 with the tiny fixture model: golden
// answers streamed and not, and every error path with its exact status and error object.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <regex>
#include <string>
#include <thread>

#include "base/captured_log.h"
#include "base/log.h"
#include "server/chat_request.h"
#include "server_harness.h"
#include "text/chat_template.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

class ServerHttpTest : public SharedServerTest {
 protected:
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
};

// Every log line while it lives, and the text format back afterwards (a test may switch
// to JSON).
class LogCapture : public CapturedLog {
 public:
  ~LogCapture() { SetLogFormat(LogFormat::kText); }
};

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
    for (const char* key : {"upload_ms", "preprocess_ms", "vision_encode_ms", "prefill_ms",
                            "decode_ms", "ttft_ms", "decode_tokens_per_s"}) {
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

// Each image and video reports its own decode and vision-tower time (and a video the
// frames it decoded); the same request again reuses both encodings: encode_ms 0.
TEST_F(ServerHttpTest, ReportsPerImageAndVideoTimings) {
  nlohmann::json request = LoadTinyCase("08_video_and_image").request;
  // A grid and a sampling no other test asks for, so that nothing is cached yet.
  request["min_image_tokens"] = 120;
  request["messages"][0]["content"][3]["max_frames"] = 4;
  request["max_tokens"] = 1;
  const HttpResult first = Chat(request);
  ASSERT_EQ(first.status, 200) << first.body;
  const nlohmann::json& image = first.json["timings"]["images"][0];
  EXPECT_EQ(image["source"], "encoder");
  EXPECT_GE(image["tokens"].get<int>(), 120);
  EXPECT_GT(image["decode_ms"].get<double>(), 0);
  EXPECT_GT(image["encode_ms"].get<double>(), 0);
  const nlohmann::json& video = first.json["timings"]["videos"][0];
  EXPECT_EQ(video["source"], "encoder");
  EXPECT_EQ(video["frames"], 5);
  EXPECT_EQ(video["sampled_frames"], 4);
  EXPECT_EQ(video["decoded_frames"], 4);          // a frame list decodes only the sampled frames
  EXPECT_GT(video["text_tokens"].get<int>(), 0);  // two timestamps and their markers
  EXPECT_EQ(video["declared_seconds"], 0);        // not a file cut short
  EXPECT_EQ(video["frames_at_rate"], 0);          // sampled as asked, not thinned to fit
  EXPECT_GT(video["decode_ms"].get<double>(), 0);
  EXPECT_GT(video["encode_ms"].get<double>(), 0);
  EXPECT_LE(image["encode_ms"].get<double>() + video["encode_ms"].get<double>(),
            first.json["timings"]["vision_encode_ms"].get<double>() + 1e-3);

  const HttpResult again = Chat(request);
  ASSERT_EQ(again.status, 200) << again.body;
  for (const char* kind : {"images", "videos"}) {
    const nlohmann::json& g = again.json["timings"][kind][0];
    EXPECT_TRUE(g["cached"].get<bool>()) << kind;
    EXPECT_EQ(g["encode_ms"].get<double>(), 0) << kind;
    EXPECT_GT(g["decode_ms"].get<double>(), 0) << kind;
  }
}

// A request's max_video_tokens bounds what the video costs in the prompt, its timestamps
// and vision markers included, as --max-video-tokens does.
TEST_F(ServerHttpTest, ARequestsVideoBudgetCoversItsTimestamps) {
  nlohmann::json request = LoadTinyCase("08_video_and_image").request;
  request["max_tokens"] = 1;
  const HttpResult free = Chat(request);
  ASSERT_EQ(free.status, 200) << free.body;
  const nlohmann::json& unbounded = free.json["timings"]["videos"][0];
  const int whole = unbounded["tokens"].get<int>() + unbounded["text_tokens"].get<int>();
  request["max_video_tokens"] = whole - 1;
  const HttpResult bounded = Chat(request);
  ASSERT_EQ(bounded.status, 200) << bounded.body;
  const nlohmann::json& video = bounded.json["timings"]["videos"][0];
  EXPECT_LE(video["tokens"].get<int>() + video["text_tokens"].get<int>(), whole - 1);
  EXPECT_LT(video["tokens"].get<int>(), unbounded["tokens"].get<int>());
}

// timings.upload_ms is the time the request body took to arrive, which the engine's
// stages leave out: a client that pauses in the middle of its body sees the pause there,
// on every OpenAI route, streamed or not. (The server starts timing when its handler
// starts, a moment after the head arrived: half the pause is left for that moment.)
TEST_F(ServerHttpTest, ReportsTheTimeTheBodyTookToArrive) {
  static constexpr double kPauseMs = 600;
  static constexpr double kAtLeastMs = kPauseMs / 2;
  auto post_slowly = [](const std::string& path, const nlohmann::json& request) {
    const std::string body = request.dump();
    const size_t half = body.size() / 2;
    httplib::Client client = harness_->Client();
    const httplib::Result r = client.Post(
        path.c_str(), body.size(),
        [&](size_t offset, size_t, httplib::DataSink& sink) {
          if (offset == half) {
            std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(kPauseMs));
          }
          const size_t end = offset == 0 ? half : body.size();
          return sink.write(body.data() + offset, end - offset);
        },
        "application/json");
    EXPECT_TRUE(r && r->status == 200) << path << ": " << (r ? r->body : "no response");
    return r ? r->body : std::string();
  };
  nlohmann::json chat = TextRequest("How long did this take?");
  const nlohmann::json answer = nlohmann::json::parse(post_slowly("/v1/chat/completions", chat));
  EXPECT_GE(answer["timings"]["upload_ms"].get<double>(), kAtLeastMs) << answer;

  chat["stream"] = true;
  nlohmann::json finish;
  for (const nlohmann::json& event : SseEvents(post_slowly("/v1/chat/completions", chat))) {
    if (event.is_object() && event.contains("timings")) finish = event;
  }
  ASSERT_TRUE(finish.is_object());
  EXPECT_GE(finish["timings"]["upload_ms"].get<double>(), kAtLeastMs) << finish;

  const nlohmann::json completion = nlohmann::json::parse(post_slowly(
      "/v1/completions", {{"model", "qwen3-vl"}, {"prompt", "Hello"}, {"max_tokens", 2}}));
  EXPECT_GE(completion["timings"]["upload_ms"].get<double>(), kAtLeastMs) << completion;

  const nlohmann::json response = nlohmann::json::parse(post_slowly(
      "/v1/responses", {{"model", "qwen3-vl"}, {"input", "Hello"}, {"max_output_tokens", 16}}));
  EXPECT_GE(response["timings"]["upload_ms"].get<double>(), kAtLeastMs) << response;
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

// The fixture case's conversation as raw text: its chat template, rendered.
std::string RenderedPrompt(const TinyCase& c) {
  ChatRequestPolicy policy;
  policy.pixels_per_image_token = 32 * 32;
  const ChatRequest chat = ParseChatRequest(c.request.dump(), policy);
  return RenderChatTemplate(chat.generation.messages, /*add_generation_prompt=*/true);
}

TEST_F(ServerHttpTest, TextCompletionOfTheRenderedTemplateEqualsTheChatAnswer) {
  const TinyCase c = LoadTinyCase("01_text_only");
  const nlohmann::json body = {{"model", "qwen3-vl"},
                               {"prompt", RenderedPrompt(c)},
                               {"max_tokens", c.request["max_tokens"]},
                               {"temperature", 0}};
  const HttpResult r = PostJson(*harness_, "/v1/completions", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  const nlohmann::json& j = r.json;
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["model"], "qwen3-vl");
  EXPECT_EQ(j["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  ASSERT_EQ(j["choices"].size(), 1u);
  EXPECT_EQ(j["choices"][0]["text"], c.greedy_text);
  EXPECT_EQ(j["choices"][0]["index"], 0);
  EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(j["choices"][0]["finish_reason"], c.finish_reason);
  EXPECT_EQ(j["usage"]["prompt_tokens"], c.prompt_tokens);
  EXPECT_EQ(j["usage"]["completion_tokens"], c.completion_tokens);
  EXPECT_TRUE(j["timings"]["ttft_ms"].is_number());

  nlohmann::json streamed = body;
  streamed["stream"] = true;
  streamed["stream_options"] = {{"include_usage", true}};
  const HttpResult s = PostJson(*harness_, "/v1/completions", streamed.dump());
  ASSERT_EQ(s.status, 200) << s.body;
  EXPECT_EQ(s.content_type, "text/event-stream");
  const std::vector<nlohmann::json> events = SseEvents(s.body);
  ASSERT_GE(events.size(), 4u);
  std::string text;
  for (size_t i = 0; i + 3 < events.size(); ++i) {
    EXPECT_EQ(events[i]["object"], "text_completion");
    EXPECT_EQ(events[i]["id"], events[0]["id"]);
    EXPECT_TRUE(events[i]["choices"][0]["finish_reason"].is_null());
    text += events[i]["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(text, c.greedy_text);
  EXPECT_EQ(events[events.size() - 3]["choices"][0]["finish_reason"], c.finish_reason);
  EXPECT_EQ(events[events.size() - 2]["choices"], nlohmann::json::array());
  EXPECT_EQ(events[events.size() - 2]["usage"]["completion_tokens"], c.completion_tokens);
  EXPECT_EQ(events.back(), "[DONE]");
}

TEST_F(ServerHttpTest, TextCompletionOfTokenIds) {
  const TinyCase c = LoadTinyCase("01_text_only");
  const nlohmann::json meta = nlohmann::json::parse(
      ReadFile(std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/01_text_only/meta.json"));
  nlohmann::json body = {
      {"prompt", meta["input_ids"]}, {"max_tokens", c.request["max_tokens"]}, {"temperature", 0}};
  const HttpResult r = PostJson(*harness_, "/v1/completions", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["choices"][0]["text"], c.greedy_text);
  EXPECT_EQ(r.json["usage"]["prompt_tokens"], c.prompt_tokens);
  body["prompt"] = {151644, 999999};
  ExpectError(PostJson(*harness_, "/v1/completions", body.dump()), 400,
              "prompt[1]: token id 999999 is not in the vocabulary (0 to 151668)", "prompt[1]",
              "invalid_request_error", "invalid_value");
}

TEST_F(ServerHttpTest, TextCompletionDefaultsAndLogprobs) {
  const nlohmann::json body = {
      {"prompt", "The sea is"}, {"temperature", 0}, {"ignore_eos", true}, {"logprobs", 2}};
  const HttpResult r = PostJson(*harness_, "/v1/completions", body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["model"], "tiny-qwen3vl");
  EXPECT_EQ(r.json["usage"]["completion_tokens"], 16);  // OpenAI's default max_tokens
  EXPECT_EQ(r.json["choices"][0]["finish_reason"], "length");
  const nlohmann::json& l = r.json["choices"][0]["logprobs"];
  ASSERT_EQ(l["tokens"].size(), 16u);
  ASSERT_EQ(l["token_logprobs"].size(), 16u);
  ASSERT_EQ(l["top_logprobs"].size(), 16u);
  ASSERT_EQ(l["text_offset"].size(), 16u);
  // Byte offsets into the text (a token's own string may be part of a character, which
  // JSON shows as U+FFFD).
  EXPECT_EQ(l["text_offset"][0], 0);
  for (size_t i = 0; i < 16; ++i) {
    if (i > 0) {
      EXPECT_GT(l["text_offset"][i], l["text_offset"][i - 1]);
    }
    EXPECT_LE(l["token_logprobs"][i].get<double>(), 0.0);
    const nlohmann::json& top = l["top_logprobs"][i];
    EXPECT_GE(top.size(), 1u);
    EXPECT_LE(top.size(), 3u);
    // Greedy: the chosen token is the best one.
    double best = -1e30;
    for (const auto& [token, logprob] : top.items()) best = std::max(best, logprob.get<double>());
    EXPECT_DOUBLE_EQ(best, l["token_logprobs"][i].get<double>());
  }
  EXPECT_LT(l["text_offset"][15].get<size_t>(),
            r.json["choices"][0]["text"].get<std::string>().size());
}

TEST_F(ServerHttpTest, TextCompletionRefusalsNameTheField) {
  auto post = [](nlohmann::json extra) {
    nlohmann::json body = {{"model", "qwen3-vl"}, {"prompt", "hi"}};
    body.update(extra);
    return PostJson(*harness_, "/v1/completions", body.dump());
  };
  ExpectError(post({{"suffix", "end"}}), 400, "suffix: is not supported (no text insertion)",
              "suffix", "invalid_request_error", "invalid_value");
  ExpectError(post({{"best_of", 2}}), 400,
              "best_of: only best_of = 1 is supported, got 2 (as vLLM's; ask for n answers and "
              "choose among them)",
              "best_of", "invalid_request_error", "invalid_value");
  ExpectError(post({{"prompt", std::vector<std::string>(129, "a")}}), 400,
              "prompt: at most 128 prompts per request are supported, got 129", "prompt",
              "invalid_request_error", "invalid_value");
  ExpectError(post({{"logprobs", 9}}), 400, "logprobs: must be between 0 and 5, got 9", "logprobs",
              "invalid_request_error", "invalid_value");
  ExpectError(post({{"model", "davinci-002"}}), 404,
              "model: the model \"davinci-002\" does not exist; this server serves "
              "\"tiny-qwen3vl\", \"qwen3-vl\"",
              "model", "invalid_request_error", "model_not_found");
  ExpectError(post({{"response_format", {{"type", "xml"}}}}), 400,
              "response_format.type: \"xml\" is not one of text, json_object, json_schema",
              "response_format.type", "invalid_request_error", "invalid_value");
  ExpectError(post({{"tools", {{{"type", "function"}, {"function", {{"name", "f"}}}}}}}), 400,
              "tools: is not supported on /v1/completions; use /v1/chat/completions", "tools",
              "invalid_request_error", "invalid_value");
  ExpectError(post({{"user", 5}}), 400, "user: expected a string, got integer", "user",
              "invalid_request_error", "invalid_value");
  ExpectError(post({{"prompt", "<|image_pad|>"}}), 400,
              "prompt: the prompt has 1 <|image_pad|> placeholders but 0 images", "prompt",
              "invalid_request_error", "invalid_value");
  // A prompt of several is named by its index.
  ExpectError(post({{"prompt", {"a", "<|image_pad|>"}}}), 400,
              "prompt[1]: the prompt has 1 <|image_pad|> placeholders but 0 images", "prompt[1]",
              "invalid_request_error", "invalid_value");
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
  const std::string counted =
      "qvl_http_responses_total{route=\"/v1/chat/completions\",code=\"200\"}";
  EXPECT_NE(MetricsHolding(*harness_, counted).find(counted), std::string::npos);
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
  EXPECT_NE(preflight->get_header_value("Access-Control-Allow-Methods").find("DELETE"),
            std::string::npos);
  const httplib::Result models = client.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(models->get_header_value("Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(models->get_header_value("Access-Control-Expose-Headers"),
            "Retry-After, X-Qvl-Answer-Cache, X-Request-Id");
}

TEST_F(ServerHttpTest, BookkeepingFieldsAreCheckedOnChatAsOnResponses) {
  nlohmann::json body = TextRequest("hi");
  body["user"] = 5;
  ExpectError(Chat(body), 400, "user: expected a string, got integer", "user",
              "invalid_request_error", "invalid_value");
  body = TextRequest("hi");
  body["store"] = "x";
  ExpectError(Chat(body), 400, "store: expected true or false, got string", "store",
              "invalid_request_error", "invalid_value");
  body = TextRequest("hi");
  body["metadata"] = 5;
  ExpectError(Chat(body), 400, "metadata: expected an object, got integer", "metadata",
              "invalid_request_error", "invalid_value");
  body = TextRequest("hi");
  body["user"] = "u1";
  body["metadata"] = {{"k", "v"}};
  body["store"] = false;
  body["max_tokens"] = 2;
  EXPECT_EQ(Chat(body).status, 200);
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
  body["n"] = 0;
  ExpectError(Chat(body), 400, "n: must be between 1 and 128, got 0", "n", "invalid_request_error",
              "invalid_value");
  body = TextRequest("hi");
  body["messages"][0]["content"] = {
      {{"type", "image_url"}, {"image_url", {{"url", "data:image/tiff;base64,SUkqAAgAAAA="}}}}};
  ExpectError(Chat(body), 400,
              "messages[0].content[0].image_url.url: image 1 is TIFF, which qvl does not read; "
              "send JPEG, PNG, WebP, GIF or BMP",
              "messages[0].content[0].image_url.url", "invalid_request_error", "invalid_value");
}

TEST_F(ServerHttpTest, PlaceholderTextAndBadVideosNameTheirField) {
  ExpectError(Chat(TextRequest("<|image_pad|>")), 400,
              "messages: the prompt has 1 <|image_pad|> placeholders but 0 images", "messages",
              "invalid_request_error", "invalid_value");
  nlohmann::json body = TextRequest("hi");
  const std::string frame =
      DataUrl(std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/03_two_images/images/first.png");
  body["messages"][0]["content"] = {{{"type", "video"}, {"video", {frame}}, {"fps", 2}}};
  const HttpResult r = Chat(body);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.json["error"]["param"], "messages[0].content[0].video") << r.body;
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
  ExpectError(PostJson(*harness_, "/v1/audio/speech", "{}"), 404, "no route POST /v1/audio/speech",
              nullptr, "invalid_request_error", "not_found");
  nlohmann::json body = TextRequest("hi");
  body["model"] = "gpt-4o";
  ExpectError(Chat(body), 404,
              "model: the model \"gpt-4o\" does not exist; this server serves \"tiny-qwen3vl\", "
              "\"qwen3-vl\"",
              "model", "invalid_request_error", "model_not_found");
}

// A base URL ending in '/' joined with a path starting with one (OPENAI_BASE_URL=
// http://host:8080/v1/ in some SDKs, OLLAMA_HOST=http://host:8080/) doubles a slash: the
// request reaches the route meant, and is counted under it.
TEST_F(ServerHttpTest, DoubledSlashesReachTheRouteMeant) {
  const HttpResult chat = PostJson(*harness_, "//v1/chat/completions", TextRequest("hi").dump());
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(chat.json["object"], "chat.completion");
  const HttpResult models = Get(*harness_, "/v1//models");
  ASSERT_EQ(models.status, 200) << models.body;
  EXPECT_EQ(models.json["data"][0]["id"], "tiny-qwen3vl");
  const HttpResult ollama = PostJson(*harness_, "//api/chat",
                                     nlohmann::json{{"model", "qwen3-vl"},
                                                    {"messages", TextRequest("hi")["messages"]},
                                                    {"stream", false},
                                                    {"options", {{"num_predict", 2}}}}
                                         .dump());
  ASSERT_EQ(ollama.status, 200) << ollama.body;
  EXPECT_EQ(ollama.json["done"], true);
  ExpectError(Get(*harness_, "//v2//nothing"), 404, "no route GET /v2/nothing", nullptr,
              "invalid_request_error", "not_found");
  ASSERT_EQ(Get(*harness_, "//api//tags").status, 200);
  const std::string counted = "qvl_http_responses_total{route=\"/api/tags\",code=\"200\"}";
  EXPECT_NE(MetricsHolding(*harness_, counted).find(counted), std::string::npos);
}

TEST_F(ServerHttpTest, RetrievesAModelByIdOrAlias) {
  for (const char* id : {"tiny-qwen3vl", "qwen3-vl"}) {
    const HttpResult r = Get(*harness_, std::string("/v1/models/") + id);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json["id"], id);
    EXPECT_EQ(r.json["object"], "model");
    EXPECT_EQ(r.json["owned_by"], "qvl");
    EXPECT_TRUE(r.json["created"].is_number_integer());
  }
  ExpectError(Get(*harness_, "/v1/models/Qwen/Qwen3-VL-2B-Instruct"), 404,
              "model: the model \"Qwen/Qwen3-VL-2B-Instruct\" does not exist; this server "
              "serves \"tiny-qwen3vl\", \"qwen3-vl\"",
              "model", "invalid_request_error", "model_not_found");
  ExpectError(Get(*harness_, "/v1/models/"), 404, "no route GET /v1/models/", nullptr,
              "invalid_request_error", "not_found");
}

TEST_F(ServerHttpTest, WrongMethodOnAKnownRouteIs405WithAllow) {
  httplib::Client client = harness_->Client();
  struct Case {
    std::string method, path, allow;
  };
  for (const Case& c : std::vector<Case>{{"GET", "/v1/chat/completions", "POST"},
                                         {"POST", "/v1/models", "GET"},
                                         {"DELETE", "/v1/models/qwen3-vl", "GET"},
                                         {"GET", "/v1/responses", "POST"},
                                         {"PUT", "/v1/responses/resp_1", "GET, DELETE"},
                                         {"PUT", "/health", "GET"},
                                         {"POST", "/metrics", "GET"}}) {
    SCOPED_TRACE(c.method + " " + c.path);
    httplib::Request request;
    request.method = c.method;
    request.path = c.path;
    if (c.method != "GET") request.body = "{}";
    request.set_header("Content-Type", "application/json");
    const httplib::Result r = client.send(request);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->get_header_value("Allow"), c.allow);
    HttpResult result;
    result.status = r->status;
    result.body = r->body;
    result.json = nlohmann::json::parse(r->body, nullptr, false);
    ExpectError(result, 405,
                c.method + " " + c.path + " is not allowed; this route takes " + c.allow, nullptr,
                "invalid_request_error", "method_not_allowed");
  }
  const std::string counted = "qvl_http_responses_total{route=\"/v1/models/{id}\",code=\"405\"}";
  EXPECT_NE(MetricsHolding(*harness_, counted).find(counted), std::string::npos);
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
              "messages", "invalid_request_error", "context_length_exceeded");
}

TEST_F(ServerHttpTest, MaxTokensBeyondTheContextIs400WithTheNumbers) {
  // "hi" renders as a 9-token prompt.
  nlohmann::json body = TextRequest("hi");
  body["max_tokens"] = 4088;
  ExpectError(Chat(body), 400,
              "max_tokens: the prompt is 9 tokens (0 of them image tokens) and max_tokens asks "
              "for 4088, but the context holds 4096 tokens for prompt and answer; ask for at most "
              "4087",
              "max_tokens", "invalid_request_error", "context_length_exceeded");
  body.erase("max_tokens");
  body["max_completion_tokens"] = 5000;
  ExpectError(Chat(body), 400,
              "max_completion_tokens: asks for 5000 tokens, but the context holds 4096 tokens "
              "for prompt and answer together",
              "max_completion_tokens", "invalid_request_error", "context_length_exceeded");
  // At the boundary: 2040 x " 7" is a 4088-token prompt, so 8 more fit and 9 do not.
  std::string long_text;
  for (int i = 0; i < 2040; ++i) long_text += " 7";
  body = TextRequest(long_text);
  body["max_tokens"] = 9;
  ExpectError(Chat(body), 400,
              "max_tokens: the prompt is 4088 tokens (0 of them image tokens) and max_tokens asks "
              "for 9, but the context holds 4096 tokens for prompt and answer; ask for at most 8",
              "max_tokens", "invalid_request_error", "context_length_exceeded");
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
              "messages", "invalid_request_error", "context_length_exceeded");
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

TEST_F(ServerHttpTest, OneAccessLinePerRequest) {
  LogCapture log;
  const TinyCase c = LoadTinyCase("02_one_image_jpeg");
  ASSERT_EQ(Chat(c.request).status, 200);
  const std::string line =
      log.WaitFor({" I request ", "path=/v1/chat/completions", "image_tokens=80"});
  ASSERT_FALSE(line.empty());
  EXPECT_NE(line.find("client=127.0.0.1:"), std::string::npos) << line;
  EXPECT_NE(line.find(" method=POST path=/v1/chat/completions status=200 prompt_tokens=" +
                      std::to_string(c.prompt_tokens) + " image_tokens=80 completion_tokens=" +
                      std::to_string(c.completion_tokens) + " cached_tokens="),
            std::string::npos)
      << line;
  EXPECT_NE(line.find(" ttft_ms="), std::string::npos) << line;
  EXPECT_NE(line.find(" total_ms="), std::string::npos) << line;
  EXPECT_EQ(line.find("error="), std::string::npos) << line;

  ASSERT_EQ(Get(*harness_, "/v2/nothing").status, 404);
  const std::string missing = log.WaitFor({"path=/v2/nothing"});
  EXPECT_NE(missing.find(" method=GET path=/v2/nothing status=404 total_ms="), std::string::npos)
      << missing;
  EXPECT_EQ(missing.find("prompt_tokens"), std::string::npos) << missing;
}

TEST_F(ServerHttpTest, JsonLogLinesAreOneObjectEach) {
  LogCapture log;
  SetLogFormat(LogFormat::kJson);
  nlohmann::json body = {{"prompt", "The sea"}, {"max_tokens", 3}, {"ignore_eos", true}};
  ASSERT_EQ(PostJson(*harness_, "/v1/completions", body.dump()).status, 200);
  LogInfo("a plain message");
  const std::string line = log.WaitFor({"\"path\":\"/v1/completions\""});
  ASSERT_FALSE(line.empty());
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["level"], "info");
  EXPECT_EQ(j["msg"], "request");
  EXPECT_EQ(j["method"], "POST");
  EXPECT_EQ(j["status"], 200);
  EXPECT_EQ(j["prompt_tokens"], 2);
  EXPECT_EQ(j["image_tokens"], 0);
  EXPECT_EQ(j["completion_tokens"], 3);
  EXPECT_TRUE(j["cached_tokens"].is_number_integer());
  EXPECT_TRUE(j["ttft_ms"].is_number());
  EXPECT_TRUE(j["total_ms"].is_number());
  EXPECT_EQ(j["client"].get<std::string>().rfind("127.0.0.1:", 0), 0u);
  EXPECT_TRUE(std::regex_match(j["time"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
  const nlohmann::json plain = nlohmann::json::parse(log.WaitFor({"a plain message"}));
  EXPECT_EQ(plain["msg"], "a plain message");
}

TEST_F(ServerHttpTest, MetricsBucketBoundsAreShortNumbers) {
  const HttpResult metrics = Get(*harness_, "/metrics");
  EXPECT_NE(metrics.body.find("qvl_time_to_first_token_seconds_bucket{le=\"0.025\"}"),
            std::string::npos);
  EXPECT_EQ(metrics.body.find("00000000"), std::string::npos);
}

TEST(ServerShutdownTest, AStreamCutByShutdownEndsWithLengthAndTheReason) {
  LogCapture log;
  ServerHarness harness;
  httplib::Client client = harness.Client();
  const nlohmann::json body = {{"messages", {{{"role", "user"}, {"content", "count"}}}},
                               {"max_tokens", 3000},
                               {"ignore_eos", true},
                               {"stream", true}};
  std::atomic<bool> receiving{false};
  std::string received;
  std::thread reader([&] {
    httplib::Request request;
    request.method = "POST";
    request.path = "/v1/chat/completions";
    request.body = body.dump();
    request.set_header("Content-Type", "application/json");
    request.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
      received.append(data, size);
      receiving = true;
      return true;
    };
    client.send(request);
  });
  for (int i = 0; i < 6000 && !receiving; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  harness.engine()->Shutdown(0);
  reader.join();
  const std::vector<nlohmann::json> events = SseEvents(received);
  ASSERT_GE(events.size(), 3u) << received;
  EXPECT_EQ(events.back(), "[DONE]");
  const nlohmann::json& last = events[events.size() - 2];
  EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(last["error"]["message"], "the server shut down before the answer was complete");
  EXPECT_EQ(last["error"]["code"], "unavailable");
  EXPECT_EQ(received.find("cancelled"), std::string::npos);
  const std::string line = log.WaitFor({"path=/v1/chat/completions", "status=200"});
  EXPECT_NE(line.find("error=\"the server shut down before the answer was complete\""),
            std::string::npos)
      << line;
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
  const HttpResult text = PostJson(harness, "/v1/completions", R"({"prompt": "hi"})");
  EXPECT_EQ(text.status, 503);
  EXPECT_EQ(text.json["error"]["message"], "the model is still loading; retry in a few seconds");
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
          PostJson(harness, "/v1/completions", R"({"prompt": "hi"})", headers),
          PostJson(harness, "/v1/responses", R"({"input": "hi"})", headers),
          Get(harness, "/v1/responses/resp_1", headers), Get(harness, "/v1/models", headers),
          Get(harness, "/v1/models/qwen3-vl", headers), Get(harness, "/metrics", headers)}) {
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
  EXPECT_EQ(
      PostJson(harness, "/v1/completions", R"({"prompt": "hi", "max_tokens": 2})", good).status,
      200);
  EXPECT_EQ(
      PostJson(harness, "/v1/responses", R"({"input": "hi", "max_output_tokens": 2})", good).status,
      200);
  EXPECT_EQ(Get(harness, "/v1/models", good).status, 200);
  EXPECT_EQ(Get(harness, "/v1/models/qwen3-vl", good).status, 200);
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
