// GET /props over HTTP on 127.0.0.1: a server started with limits other than the
// defaults reports those, under llama-server's names where it has them.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "base/build_info.h"
#include "server_harness.h"
#include "text/chat_template.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

// Every limit /props reports set away from its default.
HarnessOptions NonDefaultLimits() {
  HarnessOptions o = DefaultHarnessOptions();
  o.server.max_body_bytes = size_t{3} << 20;
  o.server.request.max_stop_strings = 3;
  o.engine.max_sequences = 3;
  o.engine.max_queue = 5;
  o.engine.context_tokens = 3072;
  o.engine.default_max_tokens = 100;
  o.engine.default_reasoning_budget = 40;
  o.engine.draft_tokens = 5;
  o.engine.max_images_per_request = 5;
  o.engine.max_image_bytes = size_t{3} << 20;
  o.engine.max_image_pixels = int64_t{2000} * 2000;
  o.engine.min_image_tokens = 80;
  o.engine.max_image_tokens = 512;
  o.engine.high_detail_image_tokens = 1024;
  o.engine.min_video_tokens = 20;
  o.engine.max_video_tokens = 300;
  o.engine.video_token_limit = 900;
  o.engine.video_limits.max_videos_per_request = 2;
  o.engine.video_limits.max_encoded_bytes = int64_t{5} << 20;
  o.engine.video_limits.max_frame_pixels = int64_t{1920} * 1080;
  o.engine.video_limits.max_input_frames = 1234;
  o.engine.video_limits.max_seconds = 42.5;
  return o;
}

TEST(ServerPropsTest, ReportsTheLimitsTheServerWasStartedWith) {
  const ServerHarness harness(NonDefaultLimits());
  const HttpResult r = Get(harness, "/props");
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json& props = r.json;
  EXPECT_EQ(props["total_slots"], 3);
  EXPECT_EQ(props["model_path"], "tiny-qwen3vl");
  EXPECT_EQ(props["model_alias"], "tiny-qwen3vl");
  EXPECT_EQ(props["modalities"],
            (nlohmann::json{{"vision", true}, {"video", true}, {"audio", false}}));
  EXPECT_EQ(props["chat_template"], FindChatTemplate(ModelDir()).text);
  ASSERT_TRUE(props["build_info"].is_string());
  EXPECT_EQ(props["build_info"], BuildInfo());

  const nlohmann::json& settings = props["default_generation_settings"];
  EXPECT_EQ(settings["n_ctx"], 3072);
  // The fixture's generation_config.json samples: temperature 0.7, top_p 0.8, top_k 20.
  const nlohmann::json& params = settings["params"];
  EXPECT_EQ(params["temperature"], 0.7);
  EXPECT_EQ(params["top_p"], 0.8);
  EXPECT_EQ(params["top_k"], 20);
  EXPECT_EQ(params["min_p"], 0.0);
  EXPECT_EQ(params["repeat_penalty"], 1.0);
  EXPECT_EQ(params["presence_penalty"], 0.0);
  EXPECT_EQ(params["typical_p"], 1.0);
  EXPECT_EQ(params["top_n_sigma"], -1.0);
  EXPECT_EQ(params["xtc_probability"], 0.0);
  EXPECT_EQ(params["xtc_threshold"], 0.1);
  EXPECT_EQ(params["dynatemp_range"], 0.0);
  EXPECT_EQ(params["dynatemp_exponent"], 1.0);
  EXPECT_EQ(params["mirostat"], 0);
  EXPECT_EQ(params["mirostat_tau"], 5.0);
  EXPECT_EQ(params["mirostat_eta"], 0.1);
  // The order of the chain a request without `samplers` gets: transformers', with
  // top-n-sigma first and XTC last.
  EXPECT_EQ(params["samplers"], (nlohmann::json{"penalties", "top_n_sigma", "temperature", "top_k",
                                                "top_p", "min_p", "typ_p", "xtc"}));
  EXPECT_EQ(params["max_tokens"], 100);
  EXPECT_EQ(params["n_predict"], 100);
  EXPECT_EQ(params["speculative.n_max"], 5);

  const nlohmann::json& limits = props["limits"];
  EXPECT_EQ(limits["max_body_bytes"], 3 << 20);
  EXPECT_EQ(limits["context_tokens"], 3072);
  EXPECT_EQ(limits["default_max_tokens"], 100);
  EXPECT_EQ(limits["default_thinking_token_budget"], 40);
  EXPECT_EQ(limits["max_stop_strings"], 3);
  EXPECT_EQ(limits["max_stop_token_ids"], 64);
  EXPECT_EQ(limits["max_bad_word_sequences"], 128);
  EXPECT_EQ(limits["max_bad_word_tokens"], 1024);
  EXPECT_EQ(limits["max_queue"], 5);
  EXPECT_EQ(limits["image"], (nlohmann::json{{"max_per_request", 5},
                                             {"max_bytes", 3 << 20},
                                             {"max_decoded_pixels", 2000 * 2000},
                                             {"pixels_per_token", 32 * 32},
                                             {"min_side", 32},
                                             {"max_aspect_ratio", 200},
                                             {"min_tokens", 80},
                                             {"default_max_tokens", 512},
                                             {"low_detail_tokens", 256},
                                             {"max_tokens", 1024}}));
  // The fixture's video_preprocessor_config.json has no fps: the default sampling.
  EXPECT_EQ(limits["video"],
            (nlohmann::json{{"max_per_request", 2},
                            {"max_bytes", 5 << 20},
                            {"max_frame_pixels", 1920 * 1080},
                            {"max_frames", 1234},
                            {"max_seconds", 42.5},
                            {"pixels_per_token", 2 * 32 * 32},
                            {"min_tokens", 20},
                            {"default_max_tokens", 300},
                            {"max_tokens", 900},
                            {"sampling", {{"fps", 2.0}, {"min_frames", 4}, {"max_frames", 768}}}}));
}

// The model objects tell clients the context to size their window by, under the names
// they read: vLLM's max_model_len, OpenRouter's context_length (both --ctx-size, what a
// request may use) and llama-server's meta (the model's trained context and sizes).
TEST(ServerPropsTest, ModelObjectsTellTheContextAndTheModelsSizes) {
  const ServerHarness harness(NonDefaultLimits());
  std::ifstream file(ModelDir() + "/config.json");
  const nlohmann::json text = nlohmann::json::parse(file)["text_config"];
  const HttpResult list = Get(harness, "/v1/models");
  const HttpResult one = Get(harness, "/v1/models/tiny-qwen3vl");
  ASSERT_EQ(list.status, 200) << list.body;
  ASSERT_EQ(one.status, 200) << one.body;
  const nlohmann::json& model = list.json["data"][0];
  EXPECT_EQ(model, one.json);
  EXPECT_EQ(model["max_model_len"], 3072);
  EXPECT_EQ(model["context_length"], 3072);
  EXPECT_EQ(model["meta"]["n_ctx_train"], text["max_position_embeddings"]);
  EXPECT_EQ(model["meta"]["n_vocab"], text["vocab_size"]);
  EXPECT_EQ(model["meta"]["n_embd"], text["hidden_size"]);
}

TEST(ServerPropsTest, UnsetBudgetsReportTheServerAndModelDefaults) {
  HarnessOptions o = DefaultHarnessOptions();
  o.engine.high_detail_image_tokens = 0;
  const ServerHarness harness(o);
  const HttpResult r = Get(harness, "/props");
  ASSERT_EQ(r.status, 200) << r.body;
  const nlohmann::json& image = r.json["limits"]["image"];
  // preprocessor_config.json's shortest_edge: 65536 pixels = 64 tokens.
  EXPECT_EQ(image["min_tokens"], 64);
  EXPECT_EQ(image["default_max_tokens"], 1280);
  EXPECT_EQ(image["max_tokens"], 4096);
  const nlohmann::json& video = r.json["limits"]["video"];
  // video_preprocessor_config.json's shortest_edge: 4096 pixels = 2 video tokens.
  EXPECT_EQ(video["min_tokens"], 2);
  EXPECT_EQ(video["default_max_tokens"], 2048);
  EXPECT_EQ(video["max_tokens"], 8192);
  EXPECT_EQ(video["max_bytes"], 256 << 20);
}

TEST(ServerPropsTest, NeedsTheKeyTheModelAndAGet) {
  HarnessOptions o = DefaultHarnessOptions();
  o.server.api_key = "sesame";
  o.load_model = false;
  const ServerHarness harness(o);
  EXPECT_EQ(Get(harness, "/props").status, 401);
  const HttpResult loading = Get(harness, "/props", {{"Authorization", "Bearer sesame"}});
  EXPECT_EQ(loading.status, 503);
  EXPECT_EQ(loading.json["error"]["message"], "the model is still loading; retry in a few seconds");
  httplib::Client client = harness.Client();
  const httplib::Result post =
      client.Post("/props", {{"Authorization", "Bearer sesame"}}, "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET");
  const std::string counted = "qvl_http_responses_total{route=\"/props\",code=\"405\"}";
  EXPECT_NE(MetricsHolding(harness, counted, {{"Authorization", "Bearer sesame"}}).find(counted),
            std::string::npos);
}

}  // namespace
}  // namespace qvl::testing
