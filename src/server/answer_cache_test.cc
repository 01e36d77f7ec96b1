#include "server/answer_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/model_folder_for_test.h"
#include "model/qwen3vl.h"
#include "server/chat_request.h"
#include "server/chat_route.h"
#include "server/completions_route.h"
#include "server/engine_limits.h"
#include "server/generation_route.h"
#include "share/redis_test_server.h"
#include "tiny_cases.h"

namespace qvl {
namespace {

using ::qvl::testing::LoadTinyCase;
using ::qvl::testing::ModelDir;

std::unique_ptr<Engine> TinyEngine(const EngineOptions& options,
                                   const std::string& dir = ModelDir()) {
  ModelOptions m;
  m.text_weights = WeightFormat::kBF16;
  m.vision_weights = WeightFormat::kBF16;
  m.weight_cache_dir = "none";
  return std::make_unique<Engine>(Qwen3VLModel::Load(dir, m), options);
}

EngineOptions SmallEngine() {
  EngineOptions o;
  o.threads = 1;
  o.max_sequences = 1;
  o.context_tokens = 2048;
  o.kv_cache_bytes = size_t{16} << 20;
  return o;
}

// Never connects: AnswerKey only names keys.
SharedCache& Cache() {
  static SharedCache cache = [] {
    SharedCacheOptions options;
    options.url = "redis://127.0.0.1:1";
    return SharedCache(options);
  }();
  return cache;
}

// The key a request body gets from `engine`, parsed as the chat route parses it.
std::optional<std::string> KeyOf(const nlohmann::json& body, const Engine& engine) {
  ChatRequestPolicy policy;
  TakeEngineLimits(engine, &policy);
  const std::string text = body.dump();
  return AnswerKey(Cache(), text, ParseChatRequest(text, policy).generation, engine);
}

class AnswerKeyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { engine_ = TinyEngine(SmallEngine()).release(); }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }

  static std::optional<std::string> Key(const nlohmann::json& body) {
    return KeyOf(body, *engine_);
  }

  // Greedy, so cached.
  static nlohmann::json Text(const std::string& question) {
    return {{"model", "qwen3-vl"},
            {"messages", {{{"role", "user"}, {"content", question}}}},
            {"max_tokens", 8},
            {"temperature", 0}};
  }
  static nlohmann::json Image() { return LoadTinyCase("02_one_image_jpeg").request; }
  static nlohmann::json Video() { return LoadTinyCase("07_video_frames").request; }

  // Checks that every change of `changes` (a JSON Patch operation) moves `base`'s key, each to a
  // key of its own.
  static void ExpectEachChangesTheKey(const nlohmann::json& base,
                                      const std::vector<nlohmann::json>& changes) {
    const std::optional<std::string> base_key = Key(base);
    ASSERT_TRUE(base_key);
    std::set<std::string> keys = {*base_key};
    for (const nlohmann::json& patch : changes) {
      SCOPED_TRACE(patch.dump());
      const std::optional<std::string> key = Key(base.patch(nlohmann::json::array({patch})));
      ASSERT_TRUE(key);
      EXPECT_TRUE(keys.insert(*key).second) << "the key did not change";
    }
  }

  static inline Engine* engine_ = nullptr;
};

TEST_F(AnswerKeyTest, TheSameRequestGetsTheSameKey) {
  const std::optional<std::string> key = Key(Image());
  ASSERT_TRUE(key);
  EXPECT_EQ(Key(Image()), key);
  EXPECT_EQ(key->rfind("qvl:ans:", 0), 0u) << *key;
  EXPECT_NE(Key(Text("hi")), key);
}

TEST_F(AnswerKeyTest, FieldsThatDoNotChangeTheAnswerDoNotChangeTheKey) {
  nlohmann::json body = Text("hi");
  const std::optional<std::string> key = Key(body);
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  body["user"] = "someone";
  EXPECT_EQ(Key(body), key);
  // The body's own key order and spacing.
  nlohmann::json reordered = nlohmann::json::object();
  reordered["temperature"] = 0;
  reordered["max_tokens"] = 8;
  reordered["messages"] = Text("hi")["messages"];
  reordered["model"] = "qwen3-vl";
  EXPECT_EQ(Key(reordered), key);
}

TEST_F(AnswerKeyTest, ImageBudgetsChangeTheKey) {
  ExpectEachChangesTheKey(
      Image(),
      {{{"op", "add"}, {"path", "/max_image_tokens"}, {"value", 64}},
       {{"op", "add"}, {"path", "/max_image_tokens"}, {"value", 96}},
       {{"op", "add"}, {"path", "/min_image_tokens"}, {"value", 80}},
       {{"op", "add"}, {"path", "/max_pixels"}, {"value", 70000}},
       {{"op", "add"}, {"path", "/min_pixels"}, {"value", 70000}},
       {{"op", "add"}, {"path", "/mm_processor_kwargs"}, {"value", {{"max_pixels", 70000}}}},
       {{"op", "add"}, {"path", "/messages/0/content/0/image_url/detail"}, {"value", "low"}}});
}

TEST_F(AnswerKeyTest, VideoBudgetsAndSamplingChangeTheKey) {
  ExpectEachChangesTheKey(
      Video(), {{{"op", "add"}, {"path", "/max_video_tokens"}, {"value", 64}},
                {{"op", "add"}, {"path", "/max_video_tokens"}, {"value", 96}},
                {{"op", "add"}, {"path", "/min_video_tokens"}, {"value", 40}},
                {{"op", "replace"}, {"path", "/messages/0/content/0/fps"}, {"value", 2.0}},
                {{"op", "add"}, {"path", "/mm_processor_kwargs"}, {"value", {{"fps", 1.0}}}},
                {{"op", "add"}, {"path", "/mm_processor_kwargs"}, {"value", {{"num_frames", 4}}}}});
}

TEST_F(AnswerKeyTest, SamplingOutputAndPromptFieldsChangeTheKey) {
  const nlohmann::json tool = {{"type", "function"},
                               {"function", {{"name", "f"}, {"parameters", {{"type", "object"}}}}}};
  ExpectEachChangesTheKey(
      Text("hi"),
      {{{"op", "replace"}, {"path", "/messages/0/content"}, {"value", "hello"}},
       {{"op", "add"},
        {"path", "/messages/0"},
        {"value", {{"role", "system"}, {"content", "Be brief."}}}},
       {{"op", "replace"}, {"path", "/max_tokens"}, {"value", 9}},
       {{"op", "replace"}, {"path", "/model"}, {"value", "tiny-qwen3vl"}},
       {{"op", "add"}, {"path", "/seed"}, {"value", 7}},
       {{"op", "add"}, {"path", "/repetition_penalty"}, {"value", 1.3}},
       {{"op", "add"}, {"path", "/presence_penalty"}, {"value", 0.5}},
       {{"op", "add"}, {"path", "/frequency_penalty"}, {"value", 0.5}},
       {{"op", "add"}, {"path", "/logit_bias"}, {"value", {{"13", -100}}}},
       {{"op", "add"}, {"path", "/stop"}, {"value", {"."}}},
       {{"op", "add"}, {"path", "/ignore_eos"}, {"value", true}},
       {{"op", "add"}, {"path", "/logprobs"}, {"value", true}},
       {{"op", "add"}, {"path", "/response_format"}, {"value", {{"type", "json_object"}}}},
       {{"op", "add"}, {"path", "/tools"}, {"value", {tool}}}});
  // Sampled with a seed: each sampling parameter and the seed count.
  nlohmann::json seeded = Text("hi");
  seeded["temperature"] = 0.7;
  seeded["seed"] = 1;
  ExpectEachChangesTheKey(seeded, {{{"op", "replace"}, {"path", "/seed"}, {"value", 2}},
                                   {{"op", "replace"}, {"path", "/temperature"}, {"value", 0.8}},
                                   {{"op", "add"}, {"path", "/top_p"}, {"value", 0.5}},
                                   {{"op", "add"}, {"path", "/top_k"}, {"value", 5}},
                                   {{"op", "add"}, {"path", "/min_p"}, {"value", 0.1}}});
}

TEST_F(AnswerKeyTest, AnswersMeantToDifferAreNotCached) {
  nlohmann::json body = Text("hi");
  body.erase("temperature");  // the fixture's generation_config.json samples
  EXPECT_FALSE(Key(body));
  body["temperature"] = 0.7;
  EXPECT_FALSE(Key(body));
  body = Text("hi");
  body["n"] = 2;
  EXPECT_FALSE(Key(body));
}

// A stored answer holds no prompt logprobs; llama-server's /completion reads the body of
// a /v1/completions request with other defaults, so its route is part of the key.
TEST_F(AnswerKeyTest, PromptLogprobsAreNotCachedAndTheRouteCounts) {
  const std::string body = Text("hi").dump();
  ChatRequestPolicy policy;
  TakeEngineLimits(*engine_, &policy);
  GenerationRequest request = ParseChatRequest(body, policy).generation;
  const std::optional<std::string> key = AnswerKey(Cache(), body, request, *engine_);
  ASSERT_TRUE(key);
  const std::optional<std::string> routed =
      AnswerKey(Cache(), body, request, *engine_, "/completion");
  ASSERT_TRUE(routed);
  EXPECT_NE(*routed, *key);
  request.prompt_logprobs = 0;
  EXPECT_FALSE(AnswerKey(Cache(), body, request, *engine_));
}

TEST_F(AnswerKeyTest, TheMediaBytesCountNotTheirNames) {
  // A URL or a file path may name other bytes tomorrow: the same body with other bytes
  // behind it is another request.
  const std::string body = Image().dump();
  ChatRequestPolicy policy;
  TakeEngineLimits(*engine_, &policy);
  GenerationRequest request = ParseChatRequest(body, policy).generation;
  const std::optional<std::string> key = AnswerKey(Cache(), body, request, *engine_);
  request.images[0].bytes.back() ^= 1;
  EXPECT_NE(AnswerKey(Cache(), body, request, *engine_), key);

  const std::string video_body = Video().dump();
  request = ParseChatRequest(video_body, policy).generation;
  const std::optional<std::string> video_key = AnswerKey(Cache(), video_body, request, *engine_);
  request.videos[0].frames[3].back() ^= 1;
  EXPECT_NE(AnswerKey(Cache(), video_body, request, *engine_), video_key);
  request.videos[0].frames[3].back() ^= 1;
  request.videos[0].file = {1, 2, 3};
  EXPECT_NE(AnswerKey(Cache(), video_body, request, *engine_), video_key);
}

// The server's defaults a request without its own values falls back on.
TEST_F(AnswerKeyTest, TheServersDefaultsChangeTheKey) {
  std::set<std::string> keys = {*Key(Image()), *Key(Video())};
  auto expect_new_keys = [&](const char* what, EngineOptions options) {
    SCOPED_TRACE(what);
    const std::unique_ptr<Engine> engine = TinyEngine(options);
    EXPECT_TRUE(keys.insert(*KeyOf(Image(), *engine)).second);
    EXPECT_TRUE(keys.insert(*KeyOf(Video(), *engine)).second);
  };
  EngineOptions o = SmallEngine();
  o.default_max_tokens = 100;
  expect_new_keys("default_max_tokens", o);
  o = SmallEngine();
  o.context_tokens = 3000;
  expect_new_keys("context_tokens", o);
  o = SmallEngine();
  o.max_image_tokens = 300;
  expect_new_keys("max_image_tokens", o);
  o = SmallEngine();
  o.max_pixels = 300 * 32 * 32;
  expect_new_keys("max_pixels", o);
  o = SmallEngine();
  o.min_image_tokens = 100;
  expect_new_keys("min_image_tokens", o);
  o = SmallEngine();
  o.high_detail_image_tokens = 3000;
  expect_new_keys("high_detail_image_tokens", o);
  o = SmallEngine();
  o.max_video_tokens = 300;
  expect_new_keys("max_video_tokens", o);
  o = SmallEngine();
  o.min_video_tokens = 30;
  expect_new_keys("min_video_tokens", o);
  o = SmallEngine();
  o.video_token_limit = 9000;
  expect_new_keys("video_token_limit", o);
}

// Defaults of the model folder that the model key leaves out.
TEST_F(AnswerKeyTest, TheModelFoldersSamplingDefaultsChangeTheKey) {
  // A seeded request that sets no temperature samples with generation_config.json's.
  nlohmann::json seeded = Text("hi");
  seeded.erase("temperature");
  seeded["seed"] = 1;
  const std::unique_ptr<Engine> cooler = TinyEngine(
      SmallEngine(), ModelFolderWith(ModelDir(), "generation_config.json",
                                     R"({"do_sample": true, "temperature": 0.5, "top_k": 20,
                                    "top_p": 0.8, "eos_token_id": [151645, 151643]})"));
  EXPECT_NE(KeyOf(seeded, *cooler), Key(seeded));
  // A video's frames are sampled at video_preprocessor_config.json's rate.
  const std::unique_ptr<Engine> slower = TinyEngine(
      SmallEngine(),
      ModelFolderWith(
          ModelDir(), "video_preprocessor_config.json",
          R"({"size": {"longest_edge": 25165824, "shortest_edge": 4096}, "patch_size": 16,
                     "temporal_patch_size": 2, "merge_size": 2, "image_mean": [0.5, 0.5, 0.5],
                     "image_std": [0.5, 0.5, 0.5], "fps": 1})"));
  EXPECT_NE(KeyOf(Video(), *slower), Key(Video()));
}

// The routes over HTTP with a real Redis: a greedy request asked twice is answered the
// second time from the shared answer cache, on every route that generates.
class AnswerCacheRouteTest : public AnswerKeyTest {
 protected:
  void SetUp() override {
    if (!RedisTestServer::Available()) GTEST_SKIP() << "redis-server is not installed";
    redis_ = std::make_unique<RedisTestServer>();
    SharedCacheOptions o;
    o.url = redis_->url();
    cache_ = std::make_unique<SharedCache>(o);
    engine_ptr_ = engine_;
    context_.authorized = [](const httplib::Request&) { return true; };
    context_.engine = &engine_ptr_;
    context_.shutting_down = &shutting_down_;
    context_.metrics = &metrics_;
    context_.in_flight = &in_flight_;
    context_.shared_cache = cache_.get();
    server_.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res,
                                           const httplib::ContentReader& reader) {
      HandleTextCompletion(context_, req, res, reader);
    });
    server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res,
                                                const httplib::ContentReader& reader) {
      HandleChatCompletion(context_, req, res, reader);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  void TearDown() override {
    if (!thread_.joinable()) return;
    server_.stop();
    thread_.join();
  }

  // The response's status, body and X-Qvl-Answer-Cache header; waits for the answer's
  // background write so that the next request can find it.
  std::tuple<int, std::string, std::string> Post(const std::string& path,
                                                 const nlohmann::json& body) {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(60, 0);
    auto res = client.Post(path, body.dump(), "application/json");
    cache_->writer().Flush();
    if (!res) return {0, "", ""};
    return {res->status, res->body, res->get_header_value("X-Qvl-Answer-Cache")};
  }

  std::unique_ptr<RedisTestServer> redis_;
  std::unique_ptr<SharedCache> cache_;
  std::atomic<Engine*> engine_ptr_{nullptr};
  std::atomic<bool> shutting_down_{false};
  std::atomic<int> in_flight_{0};
  ServerMetrics metrics_;
  GenerationRouteContext context_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(AnswerCacheRouteTest, AGreedyTextCompletionAskedAgainComesFromTheCache) {
  const nlohmann::json body = {{"model", "qwen3-vl"},
                               {"prompt", "The capital of France is"},
                               {"max_tokens", 6},
                               {"temperature", 0}};
  const auto [status1, body1, header1] = Post("/v1/completions", body);
  ASSERT_EQ(status1, 200) << body1;
  EXPECT_EQ(header1, "");
  EXPECT_EQ(cache_->counters().answer_stores.load(), 1);
  const auto [status2, body2, header2] = Post("/v1/completions", body);
  ASSERT_EQ(status2, 200) << body2;
  EXPECT_EQ(header2, "shared");
  EXPECT_EQ(cache_->counters().answer_hits.load(), 1);
  const nlohmann::json a = nlohmann::json::parse(body1), b = nlohmann::json::parse(body2);
  EXPECT_EQ(a["choices"][0]["text"], b["choices"][0]["text"]);
  EXPECT_EQ(b["object"], "text_completion");
  EXPECT_EQ(b["usage"]["completion_tokens"], a["usage"]["completion_tokens"]);

  // The same body with messages, to both routes: a raw prompt and a chat are other
  // answers, so neither route replays the other's.
  nlohmann::json both = body;
  both["messages"] = Text("The capital of France is")["messages"];
  ASSERT_EQ(std::get<0>(Post("/v1/completions", both)), 200);
  const auto [status3, body3, header3] = Post("/v1/chat/completions", both);
  ASSERT_EQ(status3, 200) << body3;
  EXPECT_EQ(header3, "");
}

// A replayed answer says what ended it, as the computed one did: the stop string or the
// stop token id (vLLM's stop_reason, Anthropic's stop_sequence).
TEST_F(AnswerCacheRouteTest, AReplayedAnswerKeepsWhatStoppedIt) {
  const testing::TinyCase text = LoadTinyCase("01_text_only");
  const std::string& answer = text.greedy_text;
  ASSERT_GE(answer.size(), 8u);
  const std::string stop = answer.substr(4, 3);  // ASCII in this answer ("Occurred...")
  nlohmann::json body = text.request;
  body["stop"] = {stop};
  for (const bool replayed : {false, true}) {
    SCOPED_TRACE(replayed);
    const auto [status, text, header] = Post("/v1/chat/completions", body);
    ASSERT_EQ(status, 200) << text;
    EXPECT_EQ(header, replayed ? "shared" : "");
    const nlohmann::json choice = nlohmann::json::parse(text)["choices"][0];
    EXPECT_EQ(choice["finish_reason"], "stop");
    EXPECT_EQ(choice["stop_reason"], stop);
    EXPECT_EQ(choice["message"]["content"], answer.substr(0, answer.find(stop)));
  }
}

// An answer the writer could not store (Redis down) is counted as dropped, as images'
// and stored responses' are, not silently lost.
TEST(RecordAnswer, AnAnswerRedisDidNotTakeIsCountedAsDropped) {
  SharedCacheOptions options;
  options.url = "redis://127.0.0.1:1";  // nothing listens there
  SharedCache cache(options);
  int delivered = 0;
  UpdateSink sink =
      RecordAnswer(&cache, std::string("qvl:ans:test"), [&](GenerationUpdate&&) { ++delivered; });
  GenerationUpdate text;
  text.text = "hello";
  sink(std::move(text));
  GenerationUpdate last;
  last.finished = true;
  last.finish_reason = FinishReason::kStop;
  sink(std::move(last));
  cache.writer().Flush();
  EXPECT_EQ(delivered, 2);
  EXPECT_EQ(cache.counters().answer_stores.load(), 0);
  EXPECT_EQ(cache.counters().answer_dropped.load(), 1);
  std::string metrics;
  RenderSharedCacheCounters(cache.counters(), &metrics);
  EXPECT_NE(metrics.find("\nqvl_shared_cache_answer_dropped_total 1\n"), std::string::npos)
      << metrics;
}

}  // namespace
}  // namespace qvl
