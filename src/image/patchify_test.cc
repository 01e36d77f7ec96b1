#include "image/patchify.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "base/cpu_features.h"
#include "image/patchify_kernels.h"

namespace qvl {
namespace {

RgbxImage Noise(int width, int height, uint32_t seed) {
  RgbxImage image;
  image.Reset(width, height);
  for (size_t i = 0; i < image.stride() * height; ++i) {
    seed = seed * 1664525u + 1013904223u;
    image.data()[i] = static_cast<uint8_t>(seed >> 24);
  }
  return image;
}

ImageProcessorParams Qwen3VlParams() {
  ImageProcessorParams p;
  p.patch_size = 16;
  p.image_mean = {0.5f, 0.5f, 0.5f};
  p.image_std = {0.5f, 0.5f, 0.5f};
  return p;
}

// transformers: float32(u8 * (1/255) computed in float64), then (v - mean) / std in
// float32 (fixtures README 4.4).
TEST(NormalizationTableTest, MatchesTransformersArithmetic) {
  const NormalizationTable table = MakeNormalizationTable(Qwen3VlParams());
  for (int u = 0; u < 256; ++u) {
    const float v = static_cast<float>(static_cast<double>(u) * (1.0 / 255.0));
    EXPECT_EQ(table.table[0][u], (v - 0.5f) / 0.5f) << u;
  }
  EXPECT_EQ(table.table[1][0], -1.0f);
  EXPECT_EQ(table.table[2][255], 1.0f);
}

TEST(NormalizationTableTest, HonoursPerChannelStatsAndFlags) {
  ImageProcessorParams p;  // CLIP mean/std defaults
  NormalizationTable table = MakeNormalizationTable(p);
  const float v = static_cast<float>(200 * (1.0 / 255.0));
  EXPECT_EQ(table.table[2][200], (v - 0.40821073f) / 0.27577711f);
  p.do_normalize = false;
  table = MakeNormalizationTable(p);
  EXPECT_EQ(table.table[1][200], v);
  p.do_rescale = false;
  table = MakeNormalizationTable(p);
  EXPECT_EQ(table.table[1][200], 200.0f);
}

// The layout of README 4.4, written out independently:
// row = ((by * (GW / 2) + bx) * 2 + iy) * 2 + ix, col = ((c * 2 + f) * 16 + y) * 16 + x.
TEST(PatchifyTest, FollowsTheReferenceOrder) {
  const RgbxImage image = Noise(64, 96, 3);
  const NormalizationTable table = MakeNormalizationTable(Qwen3VlParams());
  const int gh = 96 / 16, gw = 64 / 16;
  std::vector<float> out(static_cast<size_t>(gh) * gw * 1536);
  Patchify(image, table, {16, 2, 2}, out.data());
  int checked = 0;
  for (int py = 0; py < gh; ++py) {
    for (int px = 0; px < gw; ++px) {
      const int by = py / 2, iy = py % 2, bx = px / 2, ix = px % 2;
      const int row = ((by * (gw / 2) + bx) * 2 + iy) * 2 + ix;
      for (int c = 0; c < 3; ++c) {
        for (int f = 0; f < 2; ++f) {
          for (int y = 0; y < 16; ++y) {
            for (int x = 0; x < 16; ++x) {
              const int col = ((c * 2 + f) * 16 + y) * 16 + x;
              const uint8_t u = image.row(py * 16 + y)[4 * (px * 16 + x) + c];
              ASSERT_EQ(out[static_cast<size_t>(row) * 1536 + col], table.table[c][u])
                  << "patch (" << py << ", " << px << ") c " << c << " f " << f;
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, gh * gw * 1536);
}

// The AVX2 kernel recomputes the table's arithmetic; it must agree bit for bit for any
// statistics and flags, and for patch geometries other than Qwen3-VL's.
TEST(PatchifyTest, Avx2MatchesScalar) {
#if defined(__x86_64__)
  if (!GetCpuFeatures().avx2) GTEST_SKIP() << "no AVX2 on this CPU";
  std::vector<ImageProcessorParams> variants(5, Qwen3VlParams());
  variants[1] = ImageProcessorParams();  // CLIP mean/std
  variants[2].image_mean = {0.1f, 0.2f, 0.3f};
  variants[2].image_std = {0.7f, 0.8f, 0.9f};
  variants[2].rescale_factor = 1.0 / 127.0;
  variants[3].do_rescale = false;
  variants[4].do_normalize = false;
  for (const ImageProcessorParams& params : variants) {
    const NormalizationTable table = MakeNormalizationTable(params);
    for (const PatchLayout layout : {PatchLayout{16, 2, 2}, PatchLayout{8, 1, 1},
                                     PatchLayout{24, 3, 2}, PatchLayout{16, 2, 3}}) {
      const int side = layout.patch_size * layout.merge_size;
      const RgbxImage image = Noise(side * 3, side * 2, 11);
      const size_t values = static_cast<size_t>(image.width() / layout.patch_size) *
                            (image.height() / layout.patch_size) * 3 * layout.temporal_patch_size *
                            layout.patch_size * layout.patch_size;
      // One image as every frame, and a video group of distinct frames whose last one
      // repeats (an odd frame count).
      std::vector<RgbxImage> distinct;
      for (int f = 0; f < layout.temporal_patch_size; ++f)
        distinct.push_back(Noise(image.width(), image.height(), 20 + f));
      std::vector<const RgbxImage*> same(layout.temporal_patch_size, &image), video;
      for (const RgbxImage& frame : distinct) video.push_back(&frame);
      if (video.size() > 1) video.back() = video[video.size() - 2];
      for (const auto* frames : {&same, &video}) {
        std::vector<float> scalar(values, -7.0f), simd(values, 7.0f);
        patchify::PatchifyScalar(frames->data(), table, layout, scalar.data());
        patchify::PatchifyAvx2(frames->data(), table, layout, simd.data());
        EXPECT_EQ(std::memcmp(scalar.data(), simd.data(), values * sizeof(float)), 0)
            << "patch " << layout.patch_size << " temporal " << layout.temporal_patch_size
            << " merge " << layout.merge_size << " rescale " << params.do_rescale << " normalize "
            << params.do_normalize << (frames == &video ? " video" : "");
      }
    }
  }
#else
  GTEST_SKIP() << "AVX2 kernels are x86-64 only";
#endif
}

}  // namespace
}  // namespace qvl
