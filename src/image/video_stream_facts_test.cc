// The colour facts of decoded frames, including fields a broken file fills with values
// no FFmpeg enumerator names (found by video_decoder_fuzzer: a Matroska file whose
// colour matrix byte read 142). Undefined behaviour here is caught by the asan stage's
// UndefinedBehaviorSanitizer.
#include <gtest/gtest.h>

extern "C" {
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/frame.h>
#include <libswscale/swscale.h>
}

#include <cstring>

#include "image/video_stream_facts.h"

namespace qvl {
namespace {

// A frame of the given height whose colour fields hold raw integers, as a decoder that
// copies them from the stream's bytes leaves them.
AVFrame FrameWith(int height, int colorspace, int color_range, int format = AV_PIX_FMT_YUV420P) {
  AVFrame f{};
  f.width = 64;
  f.height = height;
  f.format = format;
  static_assert(sizeof f.colorspace == sizeof colorspace);
  static_assert(sizeof f.color_range == sizeof color_range);
  std::memcpy(&f.colorspace, &colorspace, sizeof colorspace);
  std::memcpy(&f.color_range, &color_range, sizeof color_range);
  return f;
}

TEST(VideoStreamFactsTest, TaggedColourMatricesAreSwscales) {
  AVFrame f = FrameWith(480, AVCOL_SPC_BT709, AVCOL_RANGE_MPEG);
  EXPECT_EQ(SwsColorspace(&f), SWS_CS_ITU709);
  f = FrameWith(1080, AVCOL_SPC_SMPTE170M, AVCOL_RANGE_MPEG);
  EXPECT_EQ(SwsColorspace(&f), SWS_CS_ITU601);
  f = FrameWith(1080, AVCOL_SPC_BT2020_NCL, AVCOL_RANGE_MPEG);
  EXPECT_EQ(SwsColorspace(&f), SWS_CS_BT2020);
}

TEST(VideoStreamFactsTest, UntaggedFramesAreBt709WhenHdAndBt601Below) {
  AVFrame hd = FrameWith(720, AVCOL_SPC_UNSPECIFIED, AVCOL_RANGE_UNSPECIFIED);
  AVFrame sd = FrameWith(576, AVCOL_SPC_UNSPECIFIED, AVCOL_RANGE_UNSPECIFIED);
  EXPECT_EQ(SwsColorspace(&hd), SWS_CS_ITU709);
  EXPECT_EQ(SwsColorspace(&sd), SWS_CS_ITU601);
}

TEST(VideoStreamFactsTest, ValuesNoEnumeratorNamesCountAsUntagged) {
  for (int raw : {142, 213, -1, 1 << 20}) {
    AVFrame hd = FrameWith(720, raw, raw);
    AVFrame sd = FrameWith(576, raw, raw);
    EXPECT_EQ(SwsColorspace(&hd), SWS_CS_ITU709) << raw;
    EXPECT_EQ(SwsColorspace(&sd), SWS_CS_ITU601) << raw;
    EXPECT_FALSE(FullRange(&sd)) << raw;
  }
}

TEST(VideoStreamFactsTest, FullRangeFromTheTagOrAJpegPixelFormat) {
  AVFrame tagged = FrameWith(480, AVCOL_SPC_BT709, AVCOL_RANGE_JPEG);
  AVFrame limited = FrameWith(480, AVCOL_SPC_BT709, AVCOL_RANGE_MPEG);
  AVFrame jpeg = FrameWith(480, AVCOL_SPC_BT709, AVCOL_RANGE_MPEG, AV_PIX_FMT_YUVJ420P);
  EXPECT_TRUE(FullRange(&tagged));
  EXPECT_FALSE(FullRange(&limited));
  EXPECT_TRUE(FullRange(&jpeg));
}

// A display matrix turns the frames upright; side data too short to be one (a container
// may hold anything there) is read as none, not past its end (caught by the asan stage).
TEST(VideoStreamFactsTest, ADisplayMatrixTurnsAndAShortOneIsNone) {
  AVFormatContext* fmt = avformat_alloc_context();
  ASSERT_NE(fmt, nullptr);
  AVStream* turned = avformat_new_stream(fmt, nullptr);
  AVStream* plain = avformat_new_stream(fmt, nullptr);
  AVStream* short_matrix = avformat_new_stream(fmt, nullptr);
  ASSERT_TRUE(turned != nullptr && plain != nullptr && short_matrix != nullptr);
  uint8_t* full = av_stream_new_side_data(turned, AV_PKT_DATA_DISPLAYMATRIX, 9 * sizeof(int32_t));
  ASSERT_NE(full, nullptr);
  av_display_rotation_set(reinterpret_cast<int32_t*>(full), 90);
  uint8_t* cut = av_stream_new_side_data(short_matrix, AV_PKT_DATA_DISPLAYMATRIX, 8);
  ASSERT_NE(cut, nullptr);
  std::memcpy(cut, full, 8);
  EXPECT_EQ(UprightOrientation(turned), 6);  // the quarter turn av_display_rotation_set(90) makes
  EXPECT_EQ(UprightOrientation(plain), 1);
  EXPECT_EQ(UprightOrientation(short_matrix), 1);
  avformat_free_context(fmt);
}

}  // namespace
}  // namespace qvl
