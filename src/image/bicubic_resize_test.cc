#include "image/bicubic_resize.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "base/error.h"
#include "base/mapped_file.h"
#include "image/image_decoder.h"
#include "image/resample_kernels.h"

namespace qvl {
namespace {

// The pattern tests/data/images/generate_pillow_corpus.py draws (base_image).
RgbxImage Pattern(int width, int height) {
  RgbxImage image;
  image.Reset(width, height);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      uint8_t* p = image.row(y) + 4 * x;
      p[0] = static_cast<uint8_t>((x * 37 + y * 11) % 256);
      p[1] = static_cast<uint8_t>((x * 5 + y * 29 + 60) % 256);
      p[2] = static_cast<uint8_t>(((x ^ y) * 13) % 256);
      p[3] = 255;
    }
  }
  return image;
}

RgbxImage Noise(int width, int height, uint32_t seed) {
  RgbxImage image;
  image.Reset(width, height);
  for (size_t i = 0; i < image.stride() * height; ++i) {
    seed = seed * 1664525u + 1013904223u;
    image.data()[i] = static_cast<uint8_t>(seed >> 24);
  }
  return image;
}

RgbxImage LoadPng(const std::string& path) {
  const std::string text = ReadFileToString(path);
  const std::vector<uint8_t> bytes(text.begin(), text.end());
  RgbxImage image;
  std::vector<uint8_t> scratch;
  DecodeImage(bytes, {}, path, &image, &scratch);
  return image;
}

// Counts differing RGB bytes (the fourth byte is padding).
int CountDifferences(const RgbxImage& a, const RgbxImage& b) {
  int differences = 0;
  for (int y = 0; y < a.height(); ++y) {
    for (int x = 0; x < a.width(); ++x) {
      for (int c = 0; c < 3; ++c) differences += a.row(y)[4 * x + c] != b.row(y)[4 * x + c];
    }
  }
  return differences;
}

class ScopedCpuTier {
 public:
  explicit ScopedCpuTier(const char* tier) { setenv("QVL_CPU", tier, 1); }
  ~ScopedCpuTier() { unsetenv("QVL_CPU"); }
};

struct ResizeGolden {
  ImageSize from, to;
};

class PillowResizeTest : public testing::TestWithParam<ResizeGolden> {};

TEST_P(PillowResizeTest, MatchesPillowBicubic) {
  const ResizeGolden& g = GetParam();
  const RgbxImage expected =
      LoadPng(StrCat(QVL_TEST_DATA, "/images/resize/", g.from.width, "x", g.from.height, "_to_",
                     g.to.width, "x", g.to.height, ".png"));
  const RgbxImage source = Pattern(g.from.width, g.from.height);
  for (const char* tier : {"scalar", "avx2"}) {
    if (std::string(tier) == "avx2" && !GetCpuFeatures().avx2) continue;
    const ScopedCpuTier scoped(tier);
    ResizeScratch scratch;
    RgbxImage out;
    BicubicResize(source, g.to, &scratch, &out);
    ASSERT_EQ(out.width(), g.to.width);
    ASSERT_EQ(out.height(), g.to.height);
    EXPECT_EQ(CountDifferences(out, expected), 0) << tier;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Goldens, PillowResizeTest,
    testing::Values(ResizeGolden{{97, 61}, {40, 25}}, ResizeGolden{{97, 61}, {97, 20}},
                    ResizeGolden{{97, 61}, {13, 61}}, ResizeGolden{{97, 61}, {30, 150}},
                    ResizeGolden{{97, 61}, {1, 1}}, ResizeGolden{{300, 7}, {9, 7}},
                    ResizeGolden{{300, 7}, {301, 9}}));

TEST(BicubicAxisTest, WeightsCoverTheInputAndSumToOne) {
  for (const auto& [in, out] : std::vector<std::pair<int, int>>{
           {1, 1}, {1, 7}, {7, 1}, {100, 37}, {37, 100}, {1000, 3}, {5, 5}}) {
    ResampleAxis axis;
    ComputeBicubicAxis(in, out, &axis);
    EXPECT_EQ(axis.taps % 2, 0);
    for (int i = 0; i < out; ++i) {
      EXPECT_GE(axis.first[i], 0);
      EXPECT_LE(axis.first[i] + axis.count[i], in);
      EXPECT_LE(axis.count[i], axis.taps);
      int64_t sum = 0;
      for (int j = 0; j < axis.taps; ++j) sum += axis.weights[i * axis.taps + j];
      // Each weight is rounded on its own, so the sum may be off by half a unit each.
      EXPECT_NEAR(sum, 1 << kWeightBits, axis.count[i]) << in << " -> " << out << " at " << i;
    }
  }
}

// The AVX2 passes give the same bytes as the scalar ones, for every size class:
// widths below one vector, ragged tails, up- and downscaling, extreme ratios.
TEST(ResampleKernelsTest, Avx2MatchesScalar) {
#if defined(__x86_64__)
  if (!GetCpuFeatures().avx2) GTEST_SKIP() << "no AVX2 on this CPU";
  uint32_t seed = 1;
  for (const int in : {1, 2, 3, 5, 8, 9, 16, 31, 64, 97, 300}) {
    for (const int out : {1, 2, 3, 7, 8, 13, 33, 64, 150, 301}) {
      const RgbxImage source = Noise(in, in, ++seed);
      ResampleAxis axis;
      ComputeBicubicAxis(in, out, &axis);
      RgbxImage scalar, simd;
      scalar.Reset(out, in);
      simd.Reset(out, in);
      resample::HorizontalScalar(source.data(), source.stride(), in, axis, scalar.data(),
                                 scalar.stride());
      resample::HorizontalAvx2(source.data(), source.stride(), in, axis, simd.data(),
                               simd.stride());
      ASSERT_EQ(std::memcmp(scalar.data(), simd.data(), scalar.stride() * in), 0)
          << "horizontal " << in << " -> " << out;
      scalar.Reset(in, out);
      simd.Reset(in, out);
      resample::VerticalScalar(source.data(), source.stride(), source.stride(), axis, scalar.data(),
                               scalar.stride());
      resample::VerticalAvx2(source.data(), source.stride(), source.stride(), axis, simd.data(),
                             simd.stride());
      ASSERT_EQ(std::memcmp(scalar.data(), simd.data(), scalar.stride() * out), 0)
          << "vertical " << in << " -> " << out;
    }
  }
#else
  GTEST_SKIP() << "AVX2 kernels are x86-64 only";
#endif
}

TEST(BicubicResizeTest, UnchangedSizeCopies) {
  const RgbxImage source = Noise(20, 10, 7);
  ResizeScratch scratch;
  RgbxImage out;
  BicubicResize(source, {20, 10}, &scratch, &out);
  EXPECT_EQ(CountDifferences(source, out), 0);
}

}  // namespace
}  // namespace qvl
