#include "image/preprocessor_config.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace qvl {
namespace {

std::string ErrorOf(const std::string& json) {
  try {
    ParsePreprocessorConfig(json, "model/preprocessor_config.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    return e.what();
  }
  return "no error";
}

TEST(PreprocessorConfigTest, ReadsQwen3VlFile) {
  const ImageProcessorParams p = LoadPreprocessorConfig(
      std::string(QVL_TEST_DATA) + "/qwen3vl-2b-config/preprocessor_config.json");
  EXPECT_EQ(p.min_pixels, 65536);
  EXPECT_EQ(p.max_pixels, 16777216);
  EXPECT_EQ(p.patch_size, 16);
  EXPECT_EQ(p.temporal_patch_size, 2);
  EXPECT_EQ(p.merge_size, 2);
  EXPECT_EQ(p.factor(), 32);
  EXPECT_EQ(p.patch_values(), 1536);
  EXPECT_EQ(p.image_mean, (std::array<float, 3>{0.5f, 0.5f, 0.5f}));
  EXPECT_EQ(p.image_std, (std::array<float, 3>{0.5f, 0.5f, 0.5f}));
  EXPECT_TRUE(p.do_rescale);
  EXPECT_DOUBLE_EQ(p.rescale_factor, 1.0 / 255.0);
  EXPECT_TRUE(p.do_normalize);
}

// Qwen2-VL files carry top-level min_pixels/max_pixels, which win over `size`.
TEST(PreprocessorConfigTest, OlderQwen2VlKeys) {
  const ImageProcessorParams p = ParsePreprocessorConfig(
      R"({"min_pixels": 3136, "max_pixels": 12845056, "patch_size": 14,
          "size": {"shortest_edge": 1, "longest_edge": 2},
          "image_mean": [0.48145466, 0.4578275, 0.40821073], "rescale_factor": 0.00392156862745098,
          "resample": 3, "do_resize": true})",
      "x.json");
  EXPECT_EQ(p.min_pixels, 3136);
  EXPECT_EQ(p.max_pixels, 12845056);
  EXPECT_EQ(p.patch_size, 14);
  EXPECT_EQ(p.factor(), 28);
}

TEST(PreprocessorConfigTest, DefaultsAreTransformers) {
  const ImageProcessorParams p = ParsePreprocessorConfig("{}", "x.json");
  EXPECT_EQ(p.min_pixels, 56 * 56);
  EXPECT_EQ(p.max_pixels, 28 * 28 * 1280);
  EXPECT_EQ(p.patch_size, 14);
  EXPECT_EQ(p.image_std[0], 0.26862954f);
  const ImageProcessorParams scalar = ParsePreprocessorConfig(R"({"image_std": 0.25})", "x.json");
  EXPECT_EQ(scalar.image_std, (std::array<float, 3>{0.25f, 0.25f, 0.25f}));
}

TEST(PreprocessorConfigTest, ErrorsNameFileAndField) {
  const std::string file = "model/preprocessor_config.json: ";
  EXPECT_EQ(ErrorOf("{"), file +
                              "malformed JSON: parse error at line 1, column 2: syntax error "
                              "while parsing object key - unexpected end of input; expected "
                              "string literal");
  EXPECT_EQ(ErrorOf("[]"), file + "expected a JSON object, got array");
  EXPECT_EQ(ErrorOf(R"({"patch_size": "16"})"), file + "patch_size must be an integer, got string");
  EXPECT_EQ(ErrorOf(R"({"patch_size": 0})"), file + "patch_size is 0, must be between 1 and 1024");
  EXPECT_EQ(ErrorOf(R"({"size": {"shortest_edge": 10}})"), file + "size.longest_edge is missing");
  EXPECT_EQ(ErrorOf(R"({"size": {"shortest_edge": 10, "longest_edge": -1}})"),
            file + "size.longest_edge is -1, must be between 1 and 1099511627776");
  EXPECT_EQ(ErrorOf(R"({"min_pixels": 100, "max_pixels": 10})"),
            file + "the minimum pixel count (100) is above the maximum (10)");
  EXPECT_EQ(ErrorOf(R"({"image_std": [0.5, 0, 0.5]})"),
            file +
                "image_std must be a non-zero number or a list of 3 non-zero numbers, got a "
                "zero");
  EXPECT_EQ(ErrorOf(R"({"image_mean": [0.5, 0.5]})"),
            file + "image_mean must be a number or a list of 3 numbers, got a list of 2");
  EXPECT_EQ(ErrorOf(R"({"image_mean": [0.5, "0.5", 0.5]})"),
            file + "image_mean must be a number or a list of 3 numbers, got a list holding string");
  EXPECT_EQ(ErrorOf(R"({"resample": 2})"),
            file + "resample must be 3 (bicubic, the only filter qvl implements), got 2");
  EXPECT_EQ(ErrorOf(R"({"do_resize": false})"),
            file + "do_resize must be true (qvl always applies smart_resize)");
  EXPECT_EQ(ErrorOf(R"({"do_rescale": 1})"),
            file + "do_rescale must be true or false, got integer");
  EXPECT_EQ(ErrorOf(R"({"patch_size": 16, "patch_size": 14})"),
            file + "malformed JSON: duplicate key \"patch_size\"");
}

TEST(PreprocessorConfigTest, MissingFile) {
  try {
    LoadPreprocessorConfig("/nonexistent/preprocessor_config.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
  }
}

// Regression (found while hardening): the error message for a deeply nested value used
// to overflow the stack in nlohmann's recursive dump().
TEST(PreprocessorConfigTest, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(300000, '[') + std::string(300000, ']');
  EXPECT_EQ(ErrorOf(R"({"image_mean": )" + deep + "}"),
            "model/preprocessor_config.json: malformed JSON: nested deeper than 64 levels");
  const std::string nested = std::string(40, '[') + "0.5" + std::string(40, ']');
  EXPECT_EQ(ErrorOf(R"({"image_mean": )" + nested + "}"),
            "model/preprocessor_config.json: image_mean must be a number or a list of 3 numbers, "
            "got a list of 1");
}

}  // namespace
}  // namespace qvl
