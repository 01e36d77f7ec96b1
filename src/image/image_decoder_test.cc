#include "image/image_decoder.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "image/exif_orientation.h"

namespace qvl {
namespace {

using Json = nlohmann::json;

const std::string kCorpus = std::string(QVL_TEST_DATA) + "/images/pillow/";

std::vector<uint8_t> ReadBytes(const std::string& path) {
  const std::string text = ReadFileToString(path);
  return std::vector<uint8_t>(text.begin(), text.end());
}

// Decodes like the pipeline does before resizing: pixels turned upright.
void DecodeUpright(const std::vector<uint8_t>& bytes, const ImageLimits& limits, RgbxImage* out,
                   DecodedImageInfo* info = nullptr) {
  RgbxImage decoded;
  std::vector<uint8_t> scratch;
  const DecodedImageInfo decoded_info = DecodeImage(bytes, limits, "image 1", &decoded, &scratch);
  if (info != nullptr) *info = decoded_info;
  if (OrientationTransforms(decoded_info.orientation)) {
    ApplyOrientation(decoded, decoded_info.orientation, out);
  } else {
    out->Reset(decoded.width(), decoded.height());
    std::memcpy(out->data(), decoded.data(), decoded.stride() * decoded.height());
  }
}

std::vector<Json> CorpusEntries() {
  const Json manifest = Json::parse(ReadFileToString(kCorpus + "manifest.json"));
  return std::vector<Json>(manifest.begin(), manifest.end());
}

class PillowCorpusTest : public testing::TestWithParam<Json> {};

// Every layout in tests/data/images/pillow decodes to exactly the RGB pixels Pillow
// gives with the reference pipeline (exif_transpose, RGBA onto white, convert("RGB")).
TEST_P(PillowCorpusTest, MatchesPillowPixels) {
  const Json& entry = GetParam();
  RgbxImage ours, expected;
  DecodeUpright(ReadBytes(kCorpus + entry.at("file").get<std::string>()), {}, &ours);
  DecodeUpright(ReadBytes(kCorpus + entry.at("expected").get<std::string>()), {}, &expected);
  ASSERT_EQ(ours.width(), entry.at("width").get<int>());
  ASSERT_EQ(ours.height(), entry.at("height").get<int>());
  ASSERT_EQ(expected.width(), ours.width());
  ASSERT_EQ(expected.height(), ours.height());
  int mismatches = 0;
  std::string first;
  for (int y = 0; y < ours.height(); ++y) {
    for (int x = 0; x < ours.width(); ++x) {
      for (int c = 0; c < 4; ++c) {
        const int a = ours.row(y)[4 * x + c], b = expected.row(y)[4 * x + c];
        if (a == b) continue;
        if (mismatches++ == 0) {
          first = StrCat("(", x, ", ", y, ") channel ", c, ": ", a, " vs Pillow ", b);
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << "first difference at " << first;
}

INSTANTIATE_TEST_SUITE_P(Pillow, PillowCorpusTest, testing::ValuesIn(CorpusEntries()),
                         [](const testing::TestParamInfo<Json>& info) {
                           std::string name = info.param.at("file").get<std::string>();
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(DecodeImageTest, ReportsFormatAndOrientation) {
  RgbxImage image;
  DecodedImageInfo info;
  DecodeUpright(ReadBytes(kCorpus + "jpeg_exif6.jpg"), {}, &image, &info);
  EXPECT_EQ(info.format, ImageFormat::kJpeg);
  EXPECT_EQ(info.orientation, 6);
  DecodeUpright(ReadBytes(kCorpus + "png_exif3_after_idat.png"), {}, &image, &info);
  EXPECT_EQ(info.format, ImageFormat::kPng);
  EXPECT_EQ(info.orientation, 3);
  DecodeUpright(ReadBytes(kCorpus + "webp_exif6.webp"), {}, &image, &info);
  EXPECT_EQ(info.format, ImageFormat::kWebp);
  EXPECT_EQ(info.orientation, 6);
  DecodeUpright(ReadBytes(kCorpus + "gif_basic.gif"), {}, &image, &info);
  EXPECT_EQ(info.format, ImageFormat::kGif);
  DecodeUpright(ReadBytes(kCorpus + "bmp_24.bmp"), {}, &image, &info);
  EXPECT_EQ(info.format, ImageFormat::kBmp);
  EXPECT_EQ(info.orientation, 1);
}

}  // namespace
}  // namespace qvl
