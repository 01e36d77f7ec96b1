// The colour facts of decoded frames, including fields a broken file fills with values
// no FFmpeg enumerator names (found by video_decoder_fuzzer: a Matroska file whose
// colour matrix byte read 142). Undefined behaviour here is caught by the asan stage's
// UndefinedBehaviorSanitizer.
#include <gtest/gtest.h>

extern "C" {
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

}  // namespace
}  // namespace qvl
