#include "model/config.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/mapped_file.h"
#include "model/scratch_folder.h"

namespace qvl {
namespace {

using nlohmann::json;

const std::string k2BConfig = std::string(QVL_TEST_DATA) + "/qwen3vl-2b-config/config.json";

json TinyJson() { return json::parse(ReadFileToString(kTinyModelDir + "/config.json")); }

// Parses the tiny config after `edit` and returns the error message ("" if none).
std::string ErrorAfter(const std::function<void(json&)>& edit) {
  json j = TinyJson();
  edit(j);
  try {
    ParseModelConfig(j.dump(), "m/config.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
    return e.what();
  }
  return "";
}

TEST(ModelConfig, Reads2BRelease) {
  const ModelConfig c = LoadModelConfig(k2BConfig);
  EXPECT_EQ(c.model_type, "qwen3_vl");
  EXPECT_EQ(c.text.hidden_size, 2048);
  EXPECT_EQ(c.text.num_layers, 28);
  EXPECT_EQ(c.text.num_heads, 16);
  EXPECT_EQ(c.text.num_kv_heads, 8);
  EXPECT_EQ(c.text.head_dim, 128);
  EXPECT_EQ(c.text.intermediate_size, 6144);
  EXPECT_EQ(c.text.vocab_size, 151936);
  EXPECT_FLOAT_EQ(c.text.rms_norm_eps, 1e-6f);
  EXPECT_EQ(c.text.rope_theta, 5000000.0);
  EXPECT_EQ(c.text.mrope_section, (std::array<int, 3>{24, 20, 20}));
  EXPECT_TRUE(c.text.mrope_interleaved);
  EXPECT_EQ(c.text.max_position_embeddings, 262144);
  EXPECT_EQ(c.text.hidden_act, "silu");
  EXPECT_FALSE(c.text.attention_bias);
  EXPECT_EQ(c.vision.depth, 24);
  EXPECT_EQ(c.vision.hidden_size, 1024);
  EXPECT_EQ(c.vision.num_heads, 16);
  EXPECT_EQ(c.vision.intermediate_size, 4096);
  EXPECT_EQ(c.vision.patch_size, 16);
  EXPECT_EQ(c.vision.temporal_patch_size, 2);
  EXPECT_EQ(c.vision.spatial_merge_size, 2);
  EXPECT_EQ(c.vision.in_channels, 3);
  EXPECT_EQ(c.vision.out_hidden_size, 2048);
  EXPECT_EQ(c.vision.num_position_embeddings, 2304);
  EXPECT_EQ(c.vision.deepstack_visual_indexes, (std::vector<int>{5, 11, 17}));
  EXPECT_EQ(c.vision.hidden_act, "gelu_pytorch_tanh");
  EXPECT_EQ(c.image_token_id, 151655);
  EXPECT_EQ(c.video_token_id, 151656);
  EXPECT_EQ(c.vision_start_token_id, 151652);
  EXPECT_EQ(c.vision_end_token_id, 151653);
  EXPECT_EQ(c.bos_token_id, 151643);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{151645}));
  EXPECT_TRUE(c.tie_word_embeddings);
}

TEST(ModelConfig, ReadsTinyFixture) {
  const ModelConfig c = LoadModelConfig(kTinyModelDir + "/config.json");
  EXPECT_EQ(c.text.hidden_size, 64);
  EXPECT_EQ(c.text.num_heads * c.text.head_dim, 128);
  EXPECT_EQ(c.text.mrope_section, (std::array<int, 3>{6, 5, 5}));
  EXPECT_EQ(c.vision.deepstack_visual_indexes, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(c.vision.num_position_embeddings, 144);
}

TEST(ModelConfig, AcceptsRopeParametersWithThetaInside) {
  json j = TinyJson();
  json& t = j["text_config"];
  t["rope_parameters"] = {{"rope_type", "default"},
                          {"rope_theta", 1000000.0},
                          {"mrope_section", {4, 6, 6}},
                          {"mrope_interleaved", false}};
  t.erase("rope_scaling");
  t.erase("rope_theta");
  const ModelConfig c = ParseModelConfig(j.dump(), "config.json");
  EXPECT_EQ(c.text.rope_theta, 1000000.0);
  EXPECT_EQ(c.text.mrope_section, (std::array<int, 3>{4, 6, 6}));
  EXPECT_FALSE(c.text.mrope_interleaved);
}

TEST(ModelConfig, AcceptsEosListAndNullOptionals) {
  json j = TinyJson();
  j["text_config"]["eos_token_id"] = {151645, 151643};
  j["video_token_id"] = nullptr;
  const ModelConfig c = ParseModelConfig(j.dump(), "config.json");
  EXPECT_EQ(c.eos_token_ids, (std::vector<int32_t>{151645, 151643}));
  EXPECT_EQ(c.video_token_id, -1);
}

TEST(ModelConfig, MalformedJsonNamesFile) {
  try {
    ParseModelConfig("{\"model_type\": \"qwen3_vl\",", "m/config.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("m/config.json: malformed JSON: ", 0), 0u) << e.what();
  }
  EXPECT_THROW(ParseModelConfig("", "c"), Error);
  EXPECT_THROW(ParseModelConfig("[1, 2]", "c"), Error);
  EXPECT_THROW(ParseModelConfig(std::string(1000, '['), "c"), Error);
}

TEST(ModelConfig, DuplicateKeyIsRefused) {
  const std::string text = R"({"model_type": "qwen3_vl", "model_type": "qwen3_vl_moe"})";
  try {
    ParseModelConfig(text, "config.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "config.json: malformed JSON: duplicate key \"model_type\"");
  }
}

TEST(ModelConfig, MissingAndMistypedFields) {
  EXPECT_EQ(ErrorAfter([](json& j) { j["text_config"].erase("hidden_size"); }),
            "m/config.json: text_config.hidden_size is missing");
  EXPECT_EQ(ErrorAfter([](json& j) { j["text_config"]["hidden_size"] = "64"; }),
            "m/config.json: text_config.hidden_size must be an integer, got string");
  EXPECT_EQ(ErrorAfter([](json& j) { j["text_config"]["num_hidden_layers"] = 4.5; }),
            "m/config.json: text_config.num_hidden_layers must be an integer, got number");
  EXPECT_EQ(ErrorAfter([](json& j) { j["vision_config"]["depth"] = 0; }),
            "m/config.json: vision_config.depth is 0, must be between 1 and 1024");
  EXPECT_EQ(ErrorAfter([](json& j) { j.erase("vision_config"); }),
            "m/config.json: vision_config is missing");
  EXPECT_EQ(ErrorAfter([](json& j) { j["text_config"] = 3; }),
            "m/config.json: text_config must be an object, got integer");
  EXPECT_EQ(ErrorAfter([](json& j) { j["tie_word_embeddings"] = "yes"; }),
            "m/config.json: tie_word_embeddings must be true or false, got string");
  EXPECT_EQ(ErrorAfter([](json& j) { j["image_token_id"] = 151936; }),
            "m/config.json: image_token_id is 151936, must be between 0 and 151935");
  EXPECT_EQ(ErrorAfter([](json& j) {
              j["vision_config"]["deepstack_visual_indexes"] = {0, "x"};
            }),
            "m/config.json: vision_config.deepstack_visual_indexes[1] must be an integer, got "
            "string");
  EXPECT_EQ(ErrorAfter([](json& j) { j["text_config"].erase("rope_scaling"); }),
            "m/config.json: text_config.rope_scaling is missing (it holds mrope_section)");
}

TEST(ModelConfig, UnsupportedModels) {
  EXPECT_EQ(ErrorAfter([](json& j) { j["model_type"] = "qwen3_vl_moe"; }),
            "m/config.json: model_type \"qwen3_vl_moe\" (Mixture-of-Experts Qwen3-VL) is not "
            "supported; qvl runs the dense Qwen3-VL models (model_type \"qwen3_vl\")");
  EXPECT_EQ(ErrorAfter([](json& j) { j["model_type"] = "llava"; }),
            "m/config.json: model_type \"llava\" is not supported; qvl runs Qwen3-VL "
            "(\"qwen3_vl\")");
  EXPECT_EQ(ErrorAfter([](json& j) { j["text_config"]["hidden_act"] = "gelu"; }),
            "m/config.json: text_config.hidden_act \"gelu\" is not supported (expected \"silu\")");
  EXPECT_EQ(ErrorAfter([](json& j) { j["vision_config"]["hidden_act"] = "relu"; }),
            "m/config.json: vision_config.hidden_act \"relu\" is not supported (expected "
            "\"gelu_pytorch_tanh\")");
  EXPECT_EQ(ErrorAfter([](json& j) { j["text_config"]["rope_scaling"]["rope_type"] = "yarn"; }),
            "m/config.json: text_config.rope_scaling.rope_type \"yarn\" is not supported "
            "(expected \"default\")");
  EXPECT_EQ(ErrorAfter([](json& j) { j["text_config"]["attention_bias"] = true; }),
            "m/config.json: text_config.attention_bias is true; Qwen3-VL attention has no biases "
            "and qvl needs false");
}

// quantization_config is read by ParseWeightQuantization (quantization_config_test.cc).
TEST(ModelConfig, ReadsQuantizationConfig) {
  json j = TinyJson();
  EXPECT_FALSE(ParseModelConfig(j.dump(), "m/config.json").weight_quant.present());
  j["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128, 64}}};
  const WeightQuantization q = ParseModelConfig(j.dump(), "m/config.json").weight_quant;
  EXPECT_EQ(q.method, WeightQuantization::Method::kFp8);
  EXPECT_EQ(q.block_rows, 128);
  EXPECT_EQ(q.block_cols, 64);
}

TEST(ModelConfig, InconsistentValues) {
  EXPECT_EQ(ErrorAfter([](json& j) { j["text_config"]["num_key_value_heads"] = 3; }),
            "m/config.json: text_config.num_attention_heads (4) is not a multiple of "
            "num_key_value_heads (3)");
  EXPECT_EQ(
      ErrorAfter([](json& j) {
        j["text_config"]["rope_scaling"]["mrope_section"] = {6, 5, 6};
      }),
      "m/config.json: text_config.rope_scaling.mrope_section [6, 5, 6] sums to 17, must equal "
      "head_dim / 2 = 16");
  EXPECT_EQ(ErrorAfter([](json& j) { j["text_config"]["rope_scaling"]["mrope_section"] = {16}; }),
            "m/config.json: text_config.rope_scaling.mrope_section must have 3 entries "
            "(temporal, height, width), got 1");
  EXPECT_EQ(ErrorAfter([](json& j) {
              j["vision_config"]["deepstack_visual_indexes"] = {0, 4};
            }),
            "m/config.json: vision_config.deepstack_visual_indexes[1] is 4, must be below depth "
            "(4)");
  EXPECT_EQ(ErrorAfter([](json& j) { j["vision_config"]["num_position_embeddings"] = 140; }),
            "m/config.json: vision_config.num_position_embeddings is 140, must be a square (G x "
            "G grid)");
  EXPECT_EQ(ErrorAfter([](json& j) { j["vision_config"]["num_heads"] = 3; }),
            "m/config.json: vision_config.num_heads (3) must divide hidden_size (64) into heads "
            "whose size is a multiple of 4");
  EXPECT_EQ(ErrorAfter([](json& j) { j["vision_config"]["out_hidden_size"] = 32; }),
            "m/config.json: vision_config.out_hidden_size (32) must equal "
            "text_config.hidden_size (64)");
  EXPECT_EQ(ErrorAfter([](json& j) { j["text_config"]["rms_norm_eps"] = 0; }),
            "m/config.json: text_config.rms_norm_eps is 0, must be in (0, 1)");
}

// Both were accepted, and found only at request time or never: one id for image and
// video placeholders, and an end-of-sequence id no answer could ever produce.
TEST(ModelConfig, TokenIdsMustBeDistinctAndInTheVocabulary) {
  EXPECT_EQ(ErrorAfter([](json& j) { j["video_token_id"] = j["image_token_id"]; }),
            "m/config.json: video_token_id is 151655, the same as image_token_id; they must "
            "differ");
  EXPECT_EQ(ErrorAfter([](json& j) { j["text_config"]["eos_token_id"] = 1000000000; }),
            "m/config.json: text_config.eos_token_id is 1000000000, must be between 0 and 151935");
}

TEST(GenerationConfig, ReadsFixtureAndFallsBack) {
  const ModelConfig model = LoadModelConfig(kTinyModelDir + "/config.json");
  const GenerationConfig g = LoadGenerationConfig(kTinyModelDir + "/generation_config.json", model);
  EXPECT_TRUE(g.do_sample);
  EXPECT_FLOAT_EQ(g.temperature, 0.7f);
  EXPECT_FLOAT_EQ(g.top_p, 0.8f);
  EXPECT_EQ(g.top_k, 20);
  EXPECT_FLOAT_EQ(g.repetition_penalty, 1.0f);
  EXPECT_EQ(g.eos_token_ids, (std::vector<int32_t>{151645, 151643}));
  EXPECT_EQ(g.pad_token_id, 151643);
  EXPECT_EQ(g.bos_token_id, 151643);

  ScratchFolder dir("generation_eos");
  dir.Write("generation_config.json", R"({"eos_token_id": [151645, 151936]})");
  try {
    LoadGenerationConfig(dir.File("generation_config.json"), model);
    ADD_FAILURE() << "an eos id outside the vocabulary was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_EQ(std::string(e.what()),
              dir.File("generation_config.json") +
                  ": eos_token_id 151936 is not in the vocabulary (0 to 151935, "
                  "text_config.vocab_size of config.json): answers could never end");
  }

  const GenerationConfig absent =
      LoadGenerationConfig("/nonexistent/generation_config.json", model);
  EXPECT_FALSE(absent.do_sample);
  EXPECT_EQ(absent.eos_token_ids, (std::vector<int32_t>{151645}));
  EXPECT_EQ(absent.top_k, 0);
}

TEST(GenerationConfig, Errors) {
  const auto error = [](const std::string& text) -> std::string {
    try {
      ParseGenerationConfig(text, "g.json");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error(R"({"top_p": 0})"), "g.json: top_p is 0, must be in (0, 1]");
  EXPECT_EQ(error(R"({"temperature": -1})"), "g.json: temperature is -1, must be >= 0");
  EXPECT_EQ(error(R"({"eos_token_id": "x"})"),
            "g.json: eos_token_id must be an integer or a list of integers, got string");
  EXPECT_EQ(error(R"({"top_k": -5})"), "g.json: top_k is -5, must be between 0 and 16777216");
  EXPECT_EQ(error(R"({"do_sample": true, "pad_token_id": null, "max_new_tokens": 7})"), "");
}

}  // namespace
}  // namespace qvl
