#include "image/exif_orientation.h"

#include <gtest/gtest.h>

#include <vector>

namespace qvl {
namespace {

// A little-endian TIFF block with one IFD0 entry (tag, type, count, inline value).
std::vector<uint8_t> Exif(uint16_t tag, uint16_t type, uint32_t count, uint32_t value,
                          bool with_prefix = false) {
  std::vector<uint8_t> b;
  if (with_prefix) {
    for (const char c : {'E', 'x', 'i', 'f', '\0', '\0'}) b.push_back(static_cast<uint8_t>(c));
  }
  const auto put16 = [&b](uint32_t v) { b.push_back(v & 0xFF), b.push_back(v >> 8 & 0xFF); };
  const auto put32 = [&](uint32_t v) { put16(v & 0xFFFF), put16(v >> 16); };
  for (const int c : {73, 73, 42, 0}) b.push_back(static_cast<uint8_t>(c));  // "II*\0"
  put32(8);
  put16(1);
  put16(tag), put16(type), put32(count), put32(value);
  put32(0);
  return b;
}

TEST(ExifOrientationTest, ReadsTheOrientationTag) {
  EXPECT_EQ(ExifOrientation(Exif(0x0112, 3, 1, 6)), 6);
  EXPECT_EQ(ExifOrientation(Exif(0x0112, 3, 1, 8, true)), 8);
  EXPECT_EQ(ExifOrientation(Exif(0x0112, 4, 1, 3)), 3);  // LONG
  const std::vector<uint8_t> big_endian = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12,
                                           0,   3,   0, 0,  0, 1, 0, 5, 0, 0, 0,    0};
  EXPECT_EQ(ExifOrientation(big_endian), 5);
}

TEST(ExifOrientationTest, AbsentOrUnusable) {
  EXPECT_EQ(ExifOrientation(Exif(0x0110, 2, 1, 0)), std::nullopt);  // another tag
  EXPECT_EQ(ExifOrientation({}), std::nullopt);
  EXPECT_EQ(ExifOrientation(std::vector<uint8_t>{'n', 'o', 't', ' ', 't', 'i', 'f', 'f'}),
            std::nullopt);
  // Present but not a single integer: Pillow leaves the image alone (and does not fall
  // back to XMP).
  EXPECT_EQ(ExifOrientation(Exif(0x0112, 3, 2, 6)), 1);
  EXPECT_EQ(ExifOrientation(Exif(0x0112, 2, 1, 6)), 1);  // ASCII
  // An IFD offset past the end.
  std::vector<uint8_t> broken = Exif(0x0112, 3, 1, 6);
  broken[4] = 200;
  EXPECT_EQ(ExifOrientation(broken), std::nullopt);
}

TEST(ExifOrientationTest, XmpFallback) {
  EXPECT_EQ(XmpOrientation(R"(<rdf:Description tiff:Orientation="6"/>)"), 6);
  EXPECT_EQ(XmpOrientation("<tiff:Orientation>3</tiff:Orientation>"), 3);
  EXPECT_EQ(XmpOrientation("tiff:Orientation='6' tiff:Orientation=\"2\""), 2);
  EXPECT_EQ(XmpOrientation("<x:xmpmeta/>"), std::nullopt);
}

// A 3x2 image whose pixels are numbered 1..6 in raster order, and the result of each
// PIL transpose (checked with Pillow's Image.transpose).
TEST(ApplyOrientationTest, MatchesPilTransposes) {
  RgbxImage in;
  in.Reset(3, 2);
  for (int i = 0; i < 6; ++i) in.data()[4 * i] = static_cast<uint8_t>(i + 1);
  const std::vector<std::vector<int>> expected = {
      {},
      {},
      {3, 2, 1, 6, 5, 4},  // 2 FLIP_LEFT_RIGHT
      {6, 5, 4, 3, 2, 1},  // 3 ROTATE_180
      {4, 5, 6, 1, 2, 3},  // 4 FLIP_TOP_BOTTOM
      {1, 4, 2, 5, 3, 6},  // 5 TRANSPOSE
      {4, 1, 5, 2, 6, 3},  // 6 ROTATE_270
      {6, 3, 5, 2, 4, 1},  // 7 TRANSVERSE
      {3, 6, 2, 5, 1, 4},  // 8 ROTATE_90
  };
  for (int orientation = 2; orientation <= 8; ++orientation) {
    ASSERT_TRUE(OrientationTransforms(orientation));
    RgbxImage out;
    ApplyOrientation(in, orientation, &out);
    EXPECT_EQ(out.width(), orientation >= 5 ? 2 : 3);
    std::vector<int> values;
    for (int i = 0; i < 6; ++i) values.push_back(out.data()[4 * i]);
    EXPECT_EQ(values, expected[orientation]) << "orientation " << orientation;
  }
  EXPECT_FALSE(OrientationTransforms(1));
  EXPECT_FALSE(OrientationTransforms(0));
  EXPECT_FALSE(OrientationTransforms(9));
}

}  // namespace
}  // namespace qvl
