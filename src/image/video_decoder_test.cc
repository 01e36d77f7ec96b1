#include "image/video_decoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "golden_tensors.h"
#include "image/exif_orientation.h"
#include "image/image_decoder.h"
#include "image/video_clip_for_test.h"

namespace qvl {
namespace {

using Json = nlohmann::json;

const std::string kData = QVL_TEST_DATA;
const std::string kCases = kData + "/tiny-qwen3vl/cases/";

class VideoFileCaseTest : public testing::TestWithParam<std::string> {};

// The lossless MP4 of each case decodes to its PNG frames bit for bit, with the
// container's frame rate and count, and gives the golden pixel_values_videos.
TEST_P(VideoFileCaseTest, Mp4DecodesToThePngFramesAndTheGoldenPatches) {
  const std::string dir = kCases + GetParam() + "/";
  const Json meta = Json::parse(ReadFileToString(dir + "meta.json"));
  const Json& video = meta.at("videos")[0];
  const std::string mp4 = ReadFileToString(dir + video.at("mp4").at("file").get<std::string>());
  VideoFileDecoder decoder(Bytes(mp4), {}, "video 1");
  EXPECT_EQ(decoder.frame_count(), video.at("num_input_frames"));
  EXPECT_EQ(decoder.fps(), video.at("fps"));
  EXPECT_EQ(decoder.height(), video.at("orig_hw")[0]);
  EXPECT_EQ(decoder.width(), video.at("orig_hw")[1]);

  RgbxImage frame, png;
  std::vector<uint8_t> scratch;
  for (int64_t k = 0; k < decoder.frame_count(); ++k) {
    decoder.ReadFrame(k, &frame);
    const std::string file = ReadFileToString(dir + video.at("frames")[k].get<std::string>());
    DecodeImage(Bytes(file), {}, "png", &png, &scratch);
    ASSERT_EQ(frame.width(), png.width());
    ASSERT_EQ(frame.height(), png.height());
    int64_t differing = 0;
    for (int y = 0; y < png.height(); ++y) {
      for (int x = 0; x < png.width(); ++x) {
        for (int c = 0; c < 3; ++c) differing += frame.row(y)[4 * x + c] != png.row(y)[4 * x + c];
      }
    }
    EXPECT_EQ(differing, 0) << "frame " << k;
  }
  EXPECT_EQ(decoder.decoded_frames(), decoder.frame_count());

  const VideoProcessorParams params =
      LoadVideoPreprocessorConfig(kData + "/tiny-qwen3vl/model/video_preprocessor_config.json");
  VideoFileDecoder again(Bytes(mp4), {}, "video 1");
  const PreprocessedVideo v = PreprocessVideo(again, params, params.sampling, {}, {}, "video 1");
  EXPECT_EQ(v.sampled_indices, video.at("sampled_indices").get<std::vector<int64_t>>());
  const GoldenTensors golden(dir);
  EXPECT_EQ(golden.Mismatch(
                "pixel_values_videos",
                RawF32Tensor(v.pixel_values, {v.num_patches(), params.image.patch_values()}), 0),
            "");
}

INSTANTIATE_TEST_SUITE_P(Cases, VideoFileCaseTest,
                         testing::Values("07_video_frames", "08_video_and_image"));

// A YUV clip of libavcodec's own MPEG-4 Part 2 encoder (near-lossless quantiser), for
// the conversion path, which the lossless RGB fixtures do not take.
std::string EncodeYuvClip(const char* muxer, int w, int h, int frames, int fps) {
  return EncodeClip({.muxer = muxer, .width = w, .height = h, .frames = frames, .fps = fps});
}

// YUV sources go through swscale with the stream's matrix: the decoded frames are the
// encoded ones up to compression error, in every container, at the container's rate.
TEST(VideoFileDecoderTest, YuvClipsInSeveralContainers) {
  for (const char* muxer : {"mp4", "matroska", "mpegts"}) {
    SCOPED_TRACE(muxer);
    const std::string clip = EncodeYuvClip(muxer, 128, 96, 7, 5);
    ASSERT_GT(clip.size(), 100u);
    EXPECT_TRUE(LooksLikeVideoFile(Bytes(clip)));
    VideoFileDecoder decoder(Bytes(clip), {}, "video 1");
    EXPECT_EQ(decoder.frame_count(), 7);
    EXPECT_DOUBLE_EQ(decoder.fps(), 5.0);
    RgbxImage frame;
    for (const int k : {0, 3, 6}) {  // frames in between are decoded, not converted
      decoder.ReadFrame(k, &frame);
      ASSERT_EQ(frame.width(), 128);
      ASSERT_EQ(frame.height(), 96);
      const std::vector<uint8_t> want = SyntheticRgb(128, 96, k);
      double total = 0;
      for (int y = 0; y < 96; ++y) {
        for (int x = 0; x < 128; ++x) {
          for (int c = 0; c < 3; ++c) {
            total += std::abs(frame.row(y)[4 * x + c] - want[(y * 128 + x) * 3 + c]);
          }
        }
      }
      EXPECT_LT(total / (128 * 96 * 3), 6.0) << "frame " << k;
      // BT.601 limited range both ways (untagged SD): the flat band within rounding.
      const uint8_t* band = frame.row(80) + 4 * 64;
      EXPECT_NEAR(band[0], 200, 3) << "frame " << k;
      EXPECT_NEAR(band[1], 60, 3) << "frame " << k;
      EXPECT_NEAR(band[2], 30, 3) << "frame " << k;
    }
  }
}

// An animated GIF is a video to FFmpeg, as to the reference's readers: its frames at
// the rate of its delays (there were refused as "not a video file").
TEST(VideoFileDecoderTest, AnAnimatedGifIsAVideo) {
  const std::string gif = EncodeClip({.muxer = "gif", .encoder = "gif", .frames = 6, .fps = 5});
  ASSERT_FALSE(gif.empty());
  EXPECT_TRUE(LooksLikeVideoFile(Bytes(gif)));
  VideoFileDecoder decoder(Bytes(gif), {}, "video 1");
  EXPECT_EQ(decoder.frame_count(), 6);
  EXPECT_DOUBLE_EQ(decoder.fps(), 5.0);
  RgbxImage frame;
  for (const int k : {0, 5}) {
    decoder.ReadFrame(k, &frame);
    ASSERT_EQ(frame.width(), 128);
    ASSERT_EQ(frame.height(), 96);
    // The moving square (red 230 in RGB 3-3-2: 219), where frame k has it and not before.
    EXPECT_NEAR(frame.row(40)[4 * (8 * k + 20)], 219, 40) << "frame " << k;
  }
  EXPECT_LT(frame.row(40)[4 * 20], 150);  // frame 5's square is 40 pixels on
}

// A phone's portrait clip: landscape frames and a display matrix that turns them. They
// come out as players show them (before, the model saw them sideways), each frame the
// stored one turned, in both directions and upside down.
TEST(VideoFileDecoderTest, FramesComeOutAsTheDisplayMatrixTurnsThem) {
  const ClipSpec spec{.frames = 4, .gop = 2};
  const std::string plain = EncodeClip(spec);
  ASSERT_FALSE(plain.empty());
  // As ffmpeg's autorotation turns them: a matrix of 90 degrees clockwise by a quarter
  // turn clockwise.
  const struct {
    int rotation;  // clockwise
    int orientation;
  } turns[] = {{90, 6}, {-90, 8}, {180, 3}};
  for (const auto& [rotation, orientation] : turns) {
    SCOPED_TRACE(rotation);
    ClipSpec turned_spec = spec;
    turned_spec.rotation = rotation;
    const std::string turned = EncodeClip(turned_spec);
    VideoFileDecoder stored(Bytes(plain), {}, "video 1");
    VideoFileDecoder shown(Bytes(turned), {}, "video 1");
    const bool quarter = rotation != 180;
    EXPECT_EQ(shown.width(), quarter ? spec.height : spec.width);
    EXPECT_EQ(shown.height(), quarter ? spec.width : spec.height);
    RgbxImage frame, upright, want;
    for (const int k : {1, 3}) {
      stored.ReadFrame(k, &frame);
      shown.ReadFrame(k, &upright);
      ApplyOrientation(frame, orientation, &want);
      ASSERT_EQ(upright.width(), want.width());
      ASSERT_EQ(upright.height(), want.height());
      for (int y = 0; y < want.height(); ++y) {
        ASSERT_EQ(0, std::memcmp(upright.row(y), want.row(y), want.stride())) << "row " << y;
      }
    }
  }
}

const std::string& Clip() {
  static const std::string clip = ReadFileToString(kCases + "07_video_frames/frames/clip.mp4");
  return clip;
}

TEST(VideoFileDecoderTest, LimitsAreCheckedBeforeDecoding) {
  VideoLimits limits;
  limits.max_encoded_bytes = 1000;
  Error e = ErrorOf([&] { VideoFileDecoder(Bytes(Clip()), limits, "video 1"); });
  EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
  EXPECT_NE(std::string(e.what()).find("video 1 is 80305 bytes; at most 1000"), std::string::npos)
      << e.what();

  limits = {};
  limits.max_frame_pixels = 320 * 200;
  e = ErrorOf([&] { VideoFileDecoder(Bytes(Clip()), limits, "video 1"); });
  EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
  EXPECT_NE(std::string(e.what()).find("frames of 320x240 pixels"), std::string::npos) << e.what();

  limits = {};
  limits.max_input_frames = 5;
  e = ErrorOf([&] { VideoFileDecoder(Bytes(Clip()), limits, "video 1"); });
  EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
  // The count stops one past the limit: the clip's 8 frames were "6 frames".
  EXPECT_STREQ(e.what(), "video 1 has more than 5 frames, the most accepted");

  limits = {};
  limits.max_seconds = 1.5;  // 8 frames at 4 fps: 2 seconds
  e = ErrorOf([&] { VideoFileDecoder(Bytes(Clip()), limits, "video 1"); });
  EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
  EXPECT_NE(std::string(e.what()).find("2 seconds long"), std::string::npos) << e.what();
}

TEST(VideoFileDecoderTest, BrokenFilesAreClearErrors) {
  for (const std::string& bytes :
       {std::string("not a video at all"), std::string(), Clip().substr(0, 64),
        ReadFileToString(kCases + "02_one_image_jpeg/images/photo.jpg")}) {
    const Error e = ErrorOf([&] { VideoFileDecoder(Bytes(bytes), {}, "video 1"); });
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("video 1", 0), 0u) << e.what();
  }
}

// A file cut short keeps the frames it has: the count comes from the packets that are
// there, and decoding stops at the last whole frame.
TEST(VideoFileDecoderTest, TruncatedFileGivesTheFramesItHas) {
  const std::string cut = Clip().substr(0, Clip().size() * 3 / 4);
  try {
    VideoFileDecoder decoder(Bytes(cut), {}, "video 1");
    EXPECT_LE(decoder.frame_count(), 8);
    RgbxImage frame;
    for (int64_t k = 0; k < decoder.frame_count(); ++k) decoder.ReadFrame(k, &frame);
    EXPECT_EQ(frame.width(), 320);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
  }
}

TEST(VideoFileDecoderTest, TellsVideoFilesFromImages) {
  EXPECT_TRUE(LooksLikeVideoFile(Bytes(Clip())));
  EXPECT_FALSE(
      LooksLikeVideoFile(Bytes(ReadFileToString(kCases + "02_one_image_jpeg/images/photo.jpg"))));
  EXPECT_TRUE(LooksLikeVideoFile(Bytes(std::string("\x1A\x45\xDF\xA3\x01\x00", 6))));
  EXPECT_FALSE(
      LooksLikeVideoFile(Bytes(std::string("\0\0\0\x1C"
                                           "ftypavif",
                                           12))));
}

}  // namespace
}  // namespace qvl
