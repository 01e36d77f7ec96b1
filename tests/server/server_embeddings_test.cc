// POST /v1/embeddings, Ollama's /api/embed and its older /api/embeddings over HTTP with
// the tiny model: an input's embedding is the reference's final-normed hidden state of its
// last prompt token at unit length (a fixture case with an image, sent in vLLM's chat
// form), every input shape and route gives the same vector for the same prompt, base64 and
// dimensions are what OpenAI clients expect, and bad requests are a 400 naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "golden_tensors.h"
#include "server/base64.h"
#include "server_harness.h"
#include "tiny_cases.h"

namespace qvl::testing {
namespace {

std::vector<float> Floats(const nlohmann::json& list) { return list.get<std::vector<float>>(); }

double Norm(const std::vector<float>& v) {
  double squares = 0;
  for (const float x : v) squares += static_cast<double>(x) * x;
  return std::sqrt(squares);
}

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

class ServerEmbeddingsTest : public SharedServerTest {
 protected:
  static HttpResult Embed(const nlohmann::json& body) { return Post("/v1/embeddings", body); }
  // The embedding of one input, float form.
  static std::vector<float> EmbeddingOf(const nlohmann::json& input) {
    const HttpResult r = Embed({{"model", "tiny-qwen3vl"}, {"input", input}});
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? Floats(r.json["data"][0]["embedding"]) : std::vector<float>();
  }
  static std::string ErrorOf(const nlohmann::json& body, int status = 400) {
    const HttpResult r = Embed(body);
    EXPECT_EQ(r.status, status) << r.body;
    return r.json["error"]["message"].get<std::string>();
  }
};

TEST_F(ServerEmbeddingsTest, AnImageCaseIsTheReferencesLastHiddenStateAtUnitLength) {
  const TinyCase c = LoadTinyCase("02_one_image_jpeg");
  const HttpResult r = Embed({{"model", "tiny-qwen3vl"},
                              {"messages", c.request["messages"]},
                              {"add_generation_prompt", true}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["object"], "list");
  EXPECT_EQ(r.json["model"], "tiny-qwen3vl");
  ASSERT_EQ(r.json["data"].size(), 1u);
  EXPECT_EQ(r.json["data"][0]["object"], "embedding");
  EXPECT_EQ(r.json["data"][0]["index"], 0);
  EXPECT_EQ(r.json["usage"]["prompt_tokens"], c.prompt_tokens);
  EXPECT_EQ(r.json["usage"]["total_tokens"], c.prompt_tokens);
  const GoldenTensors golden(std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/" + c.name);
  std::vector<float> want = golden.F32("text.final_norm_last");
  const double norm = Norm(want);
  for (float& x : want) x = static_cast<float>(x / norm);
  const std::vector<float> got = Floats(r.json["data"][0]["embedding"]);
  EXPECT_LE(MaxAbsDiff(got, want), 2e-5f);
  EXPECT_NEAR(Norm(got), 1.0, 1e-5);
}

TEST_F(ServerEmbeddingsTest, EveryInputShapeGivesTheSameVectorForTheSamePrompt) {
  const std::vector<float> cat = EmbeddingOf("A cat sat on the mat.");
  const std::vector<float> dog = EmbeddingOf("A dog ran in the park.");
  ASSERT_FALSE(cat.empty());
  EXPECT_NEAR(Norm(cat), 1.0, 1e-5);
  EXPECT_GT(MaxAbsDiff(cat, dog), 1e-3f);

  // Several inputs at once, prefilled together: each as it is alone, in input order.
  const HttpResult batch = Embed({{"input", {"A dog ran in the park.", "A cat sat on the mat."}}});
  ASSERT_EQ(batch.status, 200) << batch.body;
  ASSERT_EQ(batch.json["data"].size(), 2u);
  EXPECT_EQ(batch.json["data"][1]["index"], 1);
  EXPECT_LE(MaxAbsDiff(Floats(batch.json["data"][0]["embedding"]), dog), 1e-5f);
  EXPECT_LE(MaxAbsDiff(Floats(batch.json["data"][1]["embedding"]), cat), 1e-5f);
  const HttpResult one = Embed({{"input", "A cat sat on the mat."}});
  const int cat_tokens = one.json["usage"]["prompt_tokens"];
  EXPECT_GT(batch.json["usage"]["prompt_tokens"].get<int>(), cat_tokens);

  // The same prompt as token ids (from /tokenize), alone and in a list of lists.
  const HttpResult ids =
      Post("/tokenize", {{"prompt", "A cat sat on the mat."}, {"add_special_tokens", false}});
  ASSERT_EQ(ids.status, 200) << ids.body;
  const nlohmann::json tokens = ids.json["tokens"];
  EXPECT_EQ(static_cast<int>(tokens.size()), cat_tokens);
  EXPECT_LE(MaxAbsDiff(EmbeddingOf(tokens), cat), 1e-5f);
  EXPECT_LE(MaxAbsDiff(EmbeddingOf(nlohmann::json::array({tokens})), cat), 1e-5f);

  // Ollama's /api/embed: the same vectors under its own names.
  const HttpResult ollama =
      Post("/api/embed", {{"model", "tiny-qwen3vl"}, {"input", {"A cat sat on the mat."}}});
  ASSERT_EQ(ollama.status, 200) << ollama.body;
  EXPECT_EQ(ollama.json["model"], "tiny-qwen3vl");
  ASSERT_EQ(ollama.json["embeddings"].size(), 1u);
  EXPECT_LE(MaxAbsDiff(Floats(ollama.json["embeddings"][0]), cat), 1e-5f);
  EXPECT_EQ(ollama.json["prompt_eval_count"], cat_tokens);
  // An empty input is how Ollama's clients load a model: no embeddings, at once.
  const HttpResult load = Post("/api/embed", {{"model", "tiny-qwen3vl"}, {"input", ""}});
  ASSERT_EQ(load.status, 200) << load.body;
  EXPECT_EQ(load.json["embeddings"], nlohmann::json::array());
}

TEST_F(ServerEmbeddingsTest, OllamasOlderRouteGivesTheSameVectorAsEmbed) {
  const HttpResult embed =
      Post("/api/embed", {{"model", "tiny-qwen3vl"}, {"input", "A cat sat on the mat."}});
  ASSERT_EQ(embed.status, 200) << embed.body;
  const HttpResult legacy = Post("/api/embeddings", {{"model", "tiny-qwen3vl:latest"},
                                                     {"prompt", "A cat sat on the mat."},
                                                     {"options", {{"temperature", 0}}},
                                                     {"keep_alive", "5m"}});
  ASSERT_EQ(legacy.status, 200) << legacy.body;
  // Ollama's shape: the one vector and nothing else.
  EXPECT_EQ(legacy.json.size(), 1u) << legacy.body;
  const std::vector<float> got = Floats(legacy.json["embedding"]);
  EXPECT_LE(MaxAbsDiff(got, Floats(embed.json["embeddings"][0])), 1e-5f);
  EXPECT_NEAR(Norm(got), 1.0, 1e-5);

  // An empty prompt is how the older clients load a model: an empty vector, at once.
  const HttpResult load = Post("/api/embeddings", {{"model", "tiny-qwen3vl"}, {"prompt", ""}});
  ASSERT_EQ(load.status, 200) << load.body;
  EXPECT_EQ(load.json, nlohmann::json({{"embedding", nlohmann::json::array()}}));

  // Errors in Ollama's shape, naming the field.
  const HttpResult bad = Post("/api/embeddings", {{"model", "tiny-qwen3vl"}, {"prompt", 3}});
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(bad.json["error"], "prompt: expected a string, got integer");
  const HttpResult unknown = Post("/api/embeddings", {{"model", "llama3"}, {"prompt", "x"}});
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  EXPECT_NE(unknown.json["error"].get<std::string>().find("llama3"), std::string::npos);
}

TEST_F(ServerEmbeddingsTest, Base64AndDimensionsAreWhatOpenAIClientsRead) {
  const std::vector<float> full = EmbeddingOf("Read the sign.");
  ASSERT_FALSE(full.empty());
  // The OpenAI SDKs ask for base64 by default: little-endian float32 bytes.
  const HttpResult b64 = Embed({{"input", "Read the sign."}, {"encoding_format", "base64"}});
  ASSERT_EQ(b64.status, 200) << b64.body;
  const std::vector<uint8_t> bytes =
      DecodeBase64(b64.json["data"][0]["embedding"].get<std::string>(), "embedding");
  ASSERT_EQ(bytes.size(), full.size() * sizeof(float));
  std::vector<float> decoded(full.size());
  std::memcpy(decoded.data(), bytes.data(), bytes.size());
  EXPECT_EQ(decoded, full);

  // dimensions: the first N values, at unit length again.
  const HttpResult cut = Embed({{"input", "Read the sign."}, {"dimensions", 8}});
  ASSERT_EQ(cut.status, 200) << cut.body;
  const std::vector<float> got = Floats(cut.json["data"][0]["embedding"]);
  ASSERT_EQ(got.size(), 8u);
  const std::vector<float> head(full.begin(), full.begin() + 8);
  const double norm = Norm(head);
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(got[i], head[i] / norm, 1e-6) << i;
}

TEST_F(ServerEmbeddingsTest, BadRequestsAreA400NamingTheField) {
  EXPECT_NE(ErrorOf({{"input", ""}}).find("input"), std::string::npos);
  EXPECT_NE(ErrorOf({{"input", nlohmann::json::array()}}).find("input"), std::string::npos);
  EXPECT_NE(ErrorOf({{"input", "x"}, {"dimensions", 0}}).find("dimensions"), std::string::npos);
  EXPECT_NE(ErrorOf({{"input", "x"}, {"encoding_format", "int8"}}).find("encoding_format"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"input", "x"}, {"model", "gpt-4"}}, 404).find("gpt-4"), std::string::npos);
  // A prompt over the context (4096 tokens here) names its input.
  std::string long_text;
  for (int i = 0; i < 3000; ++i) long_text += "cat dog ";
  const std::string too_long = ErrorOf({{"input", {"short", long_text}}});
  EXPECT_EQ(too_long.rfind("input[1]: the prompt is 6001 tokens", 0), 0u) << too_long;
  EXPECT_NE(too_long.find("shorten the prompt"), std::string::npos) << too_long;
  // The server still answers afterwards.
  EXPECT_FALSE(EmbeddingOf("still here").empty());
}

}  // namespace
}  // namespace qvl::testing
