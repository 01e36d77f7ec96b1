// Bad input: every failure is one qvl::Error naming the image, never a crash, a hang or
// a huge allocation.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "image/image_decoder.h"
#include "image/image_processor.h"

namespace qvl {
namespace {

const std::string kImages = std::string(QVL_TEST_DATA) + "/images/";

std::vector<uint8_t> ReadBytes(const std::string& path) {
  const std::string text = ReadFileToString(path);
  return std::vector<uint8_t>(text.begin(), text.end());
}

struct Outcome {
  bool ok = false;
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

Outcome Decode(const std::vector<uint8_t>& bytes, RgbxImage* out = nullptr) {
  RgbxImage local;
  std::vector<uint8_t> scratch;
  try {
    DecodeImage(bytes, {}, "image 1", out != nullptr ? out : &local, &scratch);
    return {true, ErrorCode::kInternal, ""};
  } catch (const Error& e) {
    return {false, e.code(), e.what()};
  }
}

Outcome Preprocess(const std::vector<uint8_t>& bytes) {
  ImageProcessorParams params;
  params.patch_size = 16;
  params.min_pixels = 65536;
  params.max_pixels = 16777216;
  try {
    PreprocessImage(bytes, params, {}, {}, "image 2");
    return {true, ErrorCode::kInternal, ""};
  } catch (const Error& e) {
    return {false, e.code(), e.what()};
  }
}

TEST(ImageErrorsTest, NotAnImage) {
  Outcome o = Decode({});
  EXPECT_EQ(o.code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(o.message, "image 1 is empty (0 bytes)");
  o = Decode({'h', 'e', 'l', 'l', 'o'});
  EXPECT_EQ(o.message, "image 1 is not a JPEG, PNG, WebP, GIF or BMP image");
  o = Decode({'I', 'I', '*', 0, 8, 0, 0, 0});
  EXPECT_EQ(o.message,
            "image 1 is TIFF, which qvl does not read; send JPEG, PNG, WebP, GIF or BMP");
  o = Decode({0, 0, 0, 0x18, 'f', 't', 'y', 'p', 'h', 'e', 'i', 'c'});
  EXPECT_EQ(o.message,
            "image 1 is HEIF/AVIF (or another ISO media file), which qvl does not read; send "
            "JPEG, PNG, WebP, GIF or BMP");
  // A signature alone is not an image.
  o = Decode({0xFF, 0xD8, 0xFF});
  EXPECT_EQ(o.code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(o.message, "image 1: the JPEG data is truncated");
}

// Headers claiming 20000 x 20000 pixels are refused before any pixel memory exists.
TEST(ImageErrorsTest, DecompressionBombsAreRefusedFromTheHeader) {
  for (const char* file : {"bomb.png", "bomb.jpg", "bomb.gif", "bomb.webp", "bomb.bmp"}) {
    RgbxImage out;
    const Outcome o = Decode(ReadBytes(kImages + "limits/" + file), &out);
    EXPECT_EQ(o.code, ErrorCode::kTooLarge) << file;
    EXPECT_EQ(o.message, "image 1 is 20000x20000 pixels; the limit is 67108864 pixels") << file;
    EXPECT_EQ(out.data(), nullptr) << file << ": pixels were allocated";
  }
}

TEST(ImageErrorsTest, TooSmallOrTooThinForSmartResize) {
  EXPECT_EQ(Preprocess(ReadBytes(kImages + "limits/1x1.png")).message,
            "image 2 is 1x1 pixels; both sides must be at least 32 pixels");
  EXPECT_EQ(Preprocess(ReadBytes(kImages + "limits/31x1000.png")).message,
            "image 2 is 31x1000 pixels; both sides must be at least 32 pixels");
  EXPECT_EQ(Preprocess(ReadBytes(kImages + "limits/1x10000.png")).message,
            "image 2 is 1x10000 pixels; both sides must be at least 32 pixels");
  const Outcome o = Preprocess(ReadBytes(kImages + "limits/32x6401.png"));
  EXPECT_EQ(o.code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(o.message,
            "image 2 is 32x6401 pixels; the longer side may be at most 200 times the shorter one");
}

std::vector<std::string> CorpusFiles() {
  const nlohmann::json manifest =
      nlohmann::json::parse(ReadFileToString(kImages + "pillow/manifest.json"));
  std::vector<std::string> files;
  for (const auto& entry : manifest) files.push_back(entry.at("file").get<std::string>());
  return files;
}

TEST(ImageErrorsTest, HalfAFileIsTruncated) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"jpeg_420.jpg", "JPEG"},       {"jpeg_progressive.jpg", "JPEG"},
      {"png_rgb8.png", "PNG"},        {"png_pal4_interlaced.png", "PNG"},
      {"gif_basic.gif", "GIF"},       {"webp_lossy.webp", "WebP"},
      {"webp_lossless.webp", "WebP"}, {"bmp_24.bmp", "BMP"}};
  for (const auto& [file, format] : cases) {
    std::vector<uint8_t> bytes = ReadBytes(kImages + "pillow/" + file);
    bytes.resize(bytes.size() / 2);
    const Outcome o = Decode(bytes);
    EXPECT_EQ(o.code, ErrorCode::kInvalidArgument) << file;
    EXPECT_EQ(o.message, "image 1: the " + format + " data is truncated") << file;
  }
}

// Every prefix of every corpus file either decodes or fails with one Error naming the
// image (run under the sanitizer build to catch memory errors too).
TEST(ImageErrorsTest, EveryTruncationFailsCleanly) {
  for (const std::string& file : CorpusFiles()) {
    const std::vector<uint8_t> full = ReadBytes(kImages + "pillow/" + file);
    const size_t step = std::max<size_t>(1, full.size() / 150);
    for (size_t size = 0; size < full.size(); size += step) {
      const Outcome o = Decode(std::vector<uint8_t>(full.begin(), full.begin() + size));
      if (o.ok) continue;
      EXPECT_EQ(o.code, ErrorCode::kInvalidArgument) << file << " cut at " << size;
      EXPECT_EQ(o.message.rfind("image 1", 0), 0u) << file << ": " << o.message;
    }
  }
}

TEST(ImageErrorsTest, CorruptBytesFailCleanly) {
  uint32_t seed = 12345;
  const auto next = [&seed] {
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
  };
  int failures = 0;
  for (const std::string& file : CorpusFiles()) {
    const std::vector<uint8_t> original = ReadBytes(kImages + "pillow/" + file);
    for (int variant = 0; variant < 40; ++variant) {
      std::vector<uint8_t> bytes = original;
      const int flips = 1 + variant % 4;
      for (int i = 0; i < flips; ++i) bytes[next() % bytes.size()] ^= 1 + next() % 255;
      const Outcome o = Decode(bytes);
      if (o.ok) continue;
      ++failures;
      EXPECT_TRUE(o.code == ErrorCode::kInvalidArgument || o.code == ErrorCode::kTooLarge)
          << file << ": " << o.message;
      EXPECT_EQ(o.message.rfind("image 1", 0), 0u) << file << ": " << o.message;
    }
  }
  EXPECT_GT(failures, 0);
}

}  // namespace
}  // namespace qvl
