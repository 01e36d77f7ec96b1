#include "image/image_processor.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "golden_tensors.h"

namespace qvl {
namespace {

using Json = nlohmann::json;

const std::string kCases = std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/";

std::vector<uint8_t> ReadBytes(const std::string& path) {
  const std::string text = ReadFileToString(path);
  return std::vector<uint8_t>(text.begin(), text.end());
}

class FixtureCaseTest : public testing::TestWithParam<std::string> {};

// Every image of every case, in message order, concatenated: pixel_values to 1e-6
// (bit for bit where the case holds only their digest), grids, and the sizes in meta.json.
TEST_P(FixtureCaseTest, MatchesGoldenPixelValues) {
  const std::string dir = kCases + GetParam() + "/";
  const Json meta = Json::parse(ReadFileToString(dir + "meta.json"));
  const ImageProcessorParams params = LoadPreprocessorConfig(
      std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/model/preprocessor_config.json");
  const GoldenTensors golden(dir);

  ImageWorkspace workspace;
  std::vector<float> pixel_values;
  std::vector<int64_t> grids;
  int index = 0;
  for (const Json& image : meta.at("images")) {
    ++index;
    const std::vector<uint8_t> bytes = ReadBytes(dir + image.at("file").get<std::string>());
    const PreprocessedImage result =
        PreprocessImage(bytes, params, {}, {}, StrCat("image ", index), &workspace);
    EXPECT_EQ(result.original.height, image.at("orig_hw")[0]);
    EXPECT_EQ(result.original.width, image.at("orig_hw")[1]);
    EXPECT_EQ(result.resized.height, image.at("resized_hw")[0]);
    EXPECT_EQ(result.resized.width, image.at("resized_hw")[1]);
    EXPECT_EQ(result.num_patches(), image.at("num_patches"));
    EXPECT_EQ(NumImageTokens(result, params), image.at("num_image_tokens"));
    pixel_values.insert(pixel_values.end(), result.pixel_values.begin(), result.pixel_values.end());
    grids.insert(grids.end(), result.grid_thw.begin(), result.grid_thw.end());
  }
  EXPECT_EQ(grids, golden.I64("image_grid_thw"));
  const int64_t rows = static_cast<int64_t>(pixel_values.size()) / params.patch_values();
  EXPECT_EQ(golden.Mismatch("pixel_values",
                            RawF32Tensor(pixel_values, {rows, params.patch_values()}), 1e-6),
            "");
}

INSTANTIATE_TEST_SUITE_P(Cases, FixtureCaseTest,
                         testing::Values("02_one_image_jpeg", "03_two_images", "04_two_turns",
                                         "05_tall_and_tiny", "06_rgba_png", "08_video_and_image"));

ImageProcessorParams Qwen3VlParams() {
  return LoadPreprocessorConfig(std::string(QVL_TEST_DATA) +
                                "/qwen3vl-2b-config/preprocessor_config.json");
}

TEST(PreprocessImageTest, BudgetShrinksTheGrid) {
  const std::vector<uint8_t> bytes = ReadBytes(kCases + "02_one_image_jpeg/images/photo.jpg");
  const ImageProcessorParams params = Qwen3VlParams();
  // 320x240 -> 320x256 by default (80 tokens); a 64-token cap (65536 pixels) takes
  // smart_resize's shrinking branch: 288x192, 54 tokens.
  const PreprocessedImage full = PreprocessImage(bytes, params, {}, {}, "image 1");
  EXPECT_EQ(NumImageTokens(full, params), 80);
  const PreprocessedImage small =
      PreprocessImage(bytes, params, ImageBudgetFromTokens(0, 64, params), {}, "image 1");
  EXPECT_EQ(small.resized, (ImageSize{288, 192}));
  EXPECT_EQ(small.grid_thw, (std::array<int64_t, 3>{1, 12, 18}));
  EXPECT_EQ(small.pixel_values.size(), static_cast<size_t>(12 * 18 * 1536));
  EXPECT_EQ(NumImageTokens(small, params), 54);
  // A cap below the model's minimum (65536 pixels) is raised to it.
  const PreprocessedImage tiny =
      PreprocessImage(bytes, params, ImageBudgetFromTokens(0, 4, params), {}, "image 1");
  EXPECT_EQ(tiny.resized, small.resized);
}

TEST(PreprocessImageTest, WorkspaceReuseGivesIdenticalResults) {
  const ImageProcessorParams params = Qwen3VlParams();
  const std::vector<uint8_t> big = ReadBytes(kCases + "05_tall_and_tiny/images/tall.png");
  const std::vector<uint8_t> small = ReadBytes(kCases + "05_tall_and_tiny/images/tiny.jpg");
  ImageWorkspace workspace;
  const PreprocessedImage a = PreprocessImage(small, params, {}, {}, "image 1");
  PreprocessImage(big, params, {}, {}, "image 2", &workspace);
  const PreprocessedImage b = PreprocessImage(small, params, {}, {}, "image 1", &workspace);
  EXPECT_EQ(a.pixel_values, b.pixel_values);
  EXPECT_EQ(a.grid_thw, b.grid_thw);
  workspace.Release();
  const PreprocessedImage c = PreprocessImage(small, params, {}, {}, "image 1", &workspace);
  EXPECT_EQ(a.pixel_values, c.pixel_values);
}

TEST(PreprocessImageTest, ErrorsNameTheImage) {
  const ImageProcessorParams params = Qwen3VlParams();
  const std::vector<uint8_t> bytes = ReadBytes(kCases + "02_one_image_jpeg/images/photo.jpg");
  ImageLimits limits;
  limits.max_encoded_bytes = 1000;
  try {
    PreprocessImage(bytes, params, {}, limits, "image 3");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
    EXPECT_STREQ(e.what(), "image 3 is 16852 bytes; the limit is 1000 bytes");
  }
  limits = {};
  limits.max_decoded_pixels = 320 * 240 - 1;
  try {
    PreprocessImage(bytes, params, {}, limits, "image 3");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
    EXPECT_STREQ(e.what(), "image 3 is 320x240 pixels; the limit is 76799 pixels");
  }
  try {
    PreprocessImage(bytes, params, {.min_pixels = 200000, .max_pixels = 100000}, {}, "image 3");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(), "image min_pixels (200000) is above max_pixels (100000)");
  }
}

}  // namespace
}  // namespace qvl
