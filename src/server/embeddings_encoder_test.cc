#include "server/embeddings_encoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/base64.h"

namespace qvl {
namespace {

using nlohmann::json;

constexpr char kModel[] = "qwen3-vl";

// The final update of input `index`: its embedding, `prompt` tokens, `total_ms` long.
GenerationUpdate Embedded(int index, std::vector<float> embedding, int64_t prompt = 5,
                          double total_ms = 10) {
  GenerationUpdate u;
  u.choice = index;
  u.finished = true;
  u.finish_reason = FinishReason::kStop;
  u.embedding = std::move(embedding);
  u.usage.prompt_tokens = prompt;
  u.timings.total_ms = total_ms;
  return u;
}

GenerationUpdate Failed(int index, FinishReason reason, const std::string& error) {
  GenerationUpdate u = Embedded(index, {}, 3);
  u.finish_reason = reason;
  u.error = error;
  u.error_code = ErrorCode::kInvalidArgument;
  return u;
}

// The floats a JSON array of numbers reads back as.
std::vector<float> Floats(const json& array) {
  std::vector<float> out;
  for (const json& v : array) out.push_back(v.get<float>());
  return out;
}

// Values whose shortest text is long, short, tiny and negative.
const std::vector<float> kValues = {0.1f, -0.33333334f, 1e-8f, 0.70710677f, 0.5f};

TEST(EmbeddingsEncoderTest, OpenAIListsEveryInputInOrderWithUsage) {
  EmbeddingsEncoder encoder(EmbeddingsDialect::kOpenAI, kModel, 2, false, 0);
  EXPECT_EQ(encoder.Start(), "");
  EXPECT_FALSE(encoder.finished());
  // A non-final update carries nothing for an embedding.
  GenerationUpdate progress;
  EXPECT_EQ(encoder.Encode(std::move(progress)), "");
  EXPECT_EQ(encoder.Encode(Embedded(1, {0.6f, 0.8f}, 7, 30)), "");
  EXPECT_FALSE(encoder.finished());
  const std::string text = encoder.Encode(Embedded(0, kValues, 5, 20));
  ASSERT_TRUE(encoder.finished());
  const json body = json::parse(text);
  EXPECT_EQ(body["object"], "list");
  EXPECT_EQ(body["model"], kModel);
  EXPECT_EQ(body["usage"], json({{"prompt_tokens", 12}, {"total_tokens", 12}}));
  ASSERT_EQ(body["data"].size(), 2u);
  EXPECT_EQ(body["data"][0]["object"], "embedding");
  EXPECT_EQ(body["data"][0]["index"], 0);
  EXPECT_EQ(Floats(body["data"][0]["embedding"]), kValues);
  EXPECT_EQ(body["data"][1]["index"], 1);
  EXPECT_EQ(Floats(body["data"][1]["embedding"]), (std::vector<float>{0.6f, 0.8f}));
  EXPECT_FALSE(body.contains("error"));
  // Each value in its shortest float32 text.
  EXPECT_NE(text.find("[0.1,-0.33333334,1e-08,0.70710677,0.5]"), std::string::npos) << text;

  const GenerationUpdate& summary = encoder.summary();
  EXPECT_TRUE(summary.finished);
  EXPECT_EQ(summary.finish_reason, FinishReason::kStop);
  EXPECT_EQ(summary.usage.prompt_tokens, 12);
  EXPECT_EQ(summary.usage.completion_tokens, 0);
  EXPECT_EQ(summary.timings.total_ms, 30);  // the input that took longest
  // Nothing after the body.
  EXPECT_EQ(encoder.Encode(Embedded(0, kValues)), "");
}

TEST(EmbeddingsEncoderTest, ARepeatedOrOutOfRangeInputIsIgnored) {
  EmbeddingsEncoder encoder(EmbeddingsDialect::kOpenAI, kModel, 2, false, 0);
  EXPECT_EQ(encoder.Encode(Embedded(0, {1.0f})), "");
  EXPECT_EQ(encoder.Encode(Embedded(0, {1.0f})), "");
  EXPECT_EQ(encoder.Encode(Embedded(2, {1.0f})), "");
  EXPECT_EQ(encoder.Encode(Embedded(-1, {1.0f})), "");
  EXPECT_FALSE(encoder.finished());
  EXPECT_NE(encoder.Encode(Embedded(1, {1.0f})), "");
  EXPECT_EQ(encoder.summary().usage.prompt_tokens, 10);
}

TEST(EmbeddingsEncoderTest, DimensionsKeepTheFirstValuesAtUnitLength) {
  EmbeddingsEncoder encoder(EmbeddingsDialect::kOpenAI, kModel, 1, false, 2);
  // (0.3, 0.4) has length 0.5: scaled back to (0.6, 0.8).
  const json body = json::parse(encoder.Encode(Embedded(0, {0.3f, 0.4f, 0.5f, std::sqrt(0.5f)})));
  const std::vector<float> values = Floats(body["data"][0]["embedding"]);
  ASSERT_EQ(values.size(), 2u);
  EXPECT_FLOAT_EQ(values[0], 0.6f);
  EXPECT_FLOAT_EQ(values[1], 0.8f);
  EXPECT_NEAR(std::hypot(values[0], values[1]), 1.0, 1e-6);
}

TEST(EmbeddingsEncoderTest, DimensionsAsLongAsTheEmbeddingChangeNothing) {
  EmbeddingsEncoder encoder(EmbeddingsDialect::kOllama, kModel, 1, false, 5);
  const json body = json::parse(encoder.Encode(Embedded(0, kValues)));
  EXPECT_EQ(Floats(body["embeddings"][0]), kValues);
}

TEST(EmbeddingsEncoderTest, Base64DecodesToTheSameFloats) {
  EmbeddingsEncoder encoder(EmbeddingsDialect::kOpenAI, kModel, 2, true, 0);
  encoder.Encode(Embedded(0, kValues));
  const json body = json::parse(encoder.Encode(Embedded(1, {1.0f, -2.5f})));
  for (const auto& [index, expected] :
       std::vector<std::pair<int, std::vector<float>>>{{0, kValues}, {1, {1.0f, -2.5f}}}) {
    const json& embedding = body["data"][index]["embedding"];
    ASSERT_TRUE(embedding.is_string()) << body.dump();
    const std::vector<uint8_t> bytes = DecodeBase64(embedding.get<std::string>(), "embedding");
    ASSERT_EQ(bytes.size(), expected.size() * 4);
    std::vector<float> decoded(expected.size());
    std::memcpy(decoded.data(), bytes.data(), bytes.size());  // the test host is little-endian
    EXPECT_EQ(decoded, expected);
  }
  // 1.0f is 00 00 80 3f little-endian.
  EXPECT_EQ(body["data"][1]["embedding"], "AACAPwAAIMA=");
}

TEST(EmbeddingsEncoderTest, OllamaShape) {
  EmbeddingsEncoder encoder(EmbeddingsDialect::kOllama, "qwen3-vl:latest", 2, false, 0);
  EXPECT_EQ(encoder.Start(), "");
  encoder.Encode(Embedded(1, {0.6f, 0.8f}, 4, 12.5));
  const json body = json::parse(encoder.Encode(Embedded(0, kValues, 6, 10)));
  EXPECT_EQ(body["model"], "qwen3-vl:latest");
  ASSERT_EQ(body["embeddings"].size(), 2u);
  EXPECT_EQ(Floats(body["embeddings"][0]), kValues);
  EXPECT_EQ(Floats(body["embeddings"][1]), (std::vector<float>{0.6f, 0.8f}));
  EXPECT_EQ(body["total_duration"], 12500000);
  EXPECT_EQ(body["load_duration"], 0);
  EXPECT_EQ(body["prompt_eval_count"], 10);
  EXPECT_FALSE(body.contains("error"));
}

TEST(EmbeddingsEncoderTest, OllamaWithNoInputsAnswersAtStart) {
  EmbeddingsEncoder encoder(EmbeddingsDialect::kOllama, kModel, 0, false, 0);
  EXPECT_TRUE(encoder.finished());
  const json body = json::parse(encoder.Start());
  EXPECT_EQ(body["model"], kModel);
  EXPECT_EQ(body["embeddings"], json::array());
  EXPECT_EQ(body["prompt_eval_count"], 0);
  EXPECT_EQ(encoder.summary().finish_reason, FinishReason::kStop);
}

TEST(EmbeddingsEncoderTest, AFailedInputMakesTheBodyAnError) {
  EmbeddingsEncoder encoder(EmbeddingsDialect::kOpenAI, kModel, 3, false, 0);
  encoder.Encode(Embedded(0, kValues));
  encoder.Encode(Failed(1, FinishReason::kError, "input[1]: the prompt is too long"));
  const json body = json::parse(encoder.Encode(Failed(2, FinishReason::kCancelled, "")));
  ASSERT_TRUE(body.contains("error")) << body.dump();
  EXPECT_FALSE(body.contains("data"));
  EXPECT_EQ(body["error"]["message"], "the answer failed: input[1]: the prompt is too long");
  EXPECT_EQ(body["error"]["type"], "invalid_request_error");
  // The first input cut short is the request's reason.
  const GenerationUpdate& summary = encoder.summary();
  EXPECT_EQ(summary.finish_reason, FinishReason::kError);
  EXPECT_EQ(summary.error, "input[1]: the prompt is too long");
  EXPECT_EQ(summary.error_code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(summary.usage.prompt_tokens, 11);
}

TEST(EmbeddingsEncoderTest, OllamaErrorIsAString) {
  EmbeddingsEncoder encoder(EmbeddingsDialect::kOllama, kModel, 1, false, 0);
  const json body = json::parse(encoder.Encode(Failed(0, FinishReason::kCancelled, "")));
  EXPECT_EQ(body, json({{"error", "the server shut down before the answer was complete"}}));
  EXPECT_EQ(encoder.summary().finish_reason, FinishReason::kCancelled);
}

TEST(EmbeddingsEncoderTest, OllamaLegacyShapeIsTheOneEmbedding) {
  EmbeddingsEncoder encoder(EmbeddingsDialect::kOllamaLegacy, kModel, 1, false, 0);
  EXPECT_EQ(encoder.Start(), "");
  const std::string text = encoder.Encode(Embedded(0, kValues, 6, 10));
  ASSERT_TRUE(encoder.finished());
  EXPECT_EQ(text, "{\"embedding\":[0.1,-0.33333334,1e-08,0.70710677,0.5]}");
  EXPECT_EQ(encoder.summary().usage.prompt_tokens, 6);
}

TEST(EmbeddingsEncoderTest, OllamaLegacyWithNoPromptAnswersAnEmptyEmbeddingAtStart) {
  EmbeddingsEncoder encoder(EmbeddingsDialect::kOllamaLegacy, kModel, 0, false, 0);
  EXPECT_TRUE(encoder.finished());
  EXPECT_EQ(encoder.Start(), "{\"embedding\":[]}");
}

TEST(EmbeddingsEncoderTest, OllamaLegacyErrorIsAString) {
  EmbeddingsEncoder encoder(EmbeddingsDialect::kOllamaLegacy, kModel, 1, false, 0);
  const json body =
      json::parse(encoder.Encode(Failed(0, FinishReason::kError, "prompt: too long")));
  EXPECT_EQ(body, json({{"error", "the answer failed: prompt: too long"}}));
}

}  // namespace
}  // namespace qvl
