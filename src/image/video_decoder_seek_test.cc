// Seeking to the keyframe before each sampled frame and frame threads give the frames
// sequential single-threaded decoding gives, bit for bit, in containers and codecs with
// B-frames (frames decoded in another order than shown) and short groups of pictures.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "image/video_clip_for_test.h"
#include "image/video_decoder.h"
#include "image/video_sampling.h"

namespace qvl {
namespace {

// Frame `indices` of `clip` as RGB(X) bytes.
std::vector<std::vector<uint8_t>> Decode(const std::string& clip,
                                         const std::vector<int64_t>& indices,
                                         const VideoDecodeOptions& options) {
  VideoFileDecoder decoder(Bytes(clip), {}, "video 1", options);
  std::vector<std::vector<uint8_t>> frames;
  RgbxImage frame;
  for (const int64_t k : indices) {
    decoder.ReadFrame(k, &frame);
    frames.emplace_back(frame.data(), frame.data() + frame.stride() * frame.height());
  }
  return frames;
}

// Mean absolute difference of a decoded frame from synthetic frame k.
double DistanceTo(const std::vector<uint8_t>& rgbx, int w, int h, int k) {
  const std::vector<uint8_t> want = SyntheticRgb(w, h, k);
  double total = 0;
  for (int i = 0; i < w * h; ++i) {
    for (int c = 0; c < 3; ++c) total += std::abs(rgbx[4 * i + c] - want[3 * i + c]);
  }
  return total / (w * h * 3);
}

struct SeekCase {
  ClipSpec spec;
  const char* name;
};

void PrintTo(const SeekCase& c, std::ostream* os) { *os << c.name; }

class VideoSeekTest : public testing::TestWithParam<SeekCase> {};

TEST_P(VideoSeekTest, SampledFramesAreThoseOfSequentialDecoding) {
  const ClipSpec& spec = GetParam().spec;
  if (avcodec_find_encoder_by_name(spec.encoder) == nullptr) {
    GTEST_SKIP() << "this libavcodec has no " << spec.encoder << " encoder";
  }
  const std::string clip = EncodeClip(spec);
  ASSERT_FALSE(clip.empty());
  VideoFileDecoder probe(Bytes(clip), {}, "video 1");
  ASSERT_EQ(probe.frame_count(), spec.frames);
  std::vector<int64_t> all(spec.frames);
  for (int k = 0; k < spec.frames; ++k) all[k] = k;
  const std::vector<std::vector<uint8_t>> sequential =
      Decode(clip, all, {.seek = false, .threads = 1});
  // Sampling at 1 fps out of 5: groups are skipped between the frames it keeps.
  const std::vector<int64_t> sampled =
      SampleFrameIndices(spec.frames, spec.fps, {.fps = 1, .min_frames = 4}, "video 1");
  ASSERT_GE(sampled.size(), 4u);
  for (const VideoDecodeOptions options :
       {VideoDecodeOptions{.seek = true, .threads = 1}, VideoDecodeOptions{.seek = true},
        VideoDecodeOptions{.seek = false, .threads = 2}}) {
    SCOPED_TRACE(testing::Message() << "seek " << options.seek << ", threads " << options.threads);
    const std::vector<std::vector<uint8_t>> frames = Decode(clip, sampled, options);
    for (size_t i = 0; i < sampled.size(); ++i) {
      EXPECT_TRUE(frames[i] == sequential[sampled[i]]) << "frame " << sampled[i];
    }
  }
  // Frame k is the k-th shown, whatever order they are decoded in: nearest to synthetic
  // frame k, not to its neighbours.
  for (const int64_t k : sampled) {
    const double here = DistanceTo(sequential[k], spec.width, spec.height, k);
    EXPECT_LT(here, 8.0) << "frame " << k;
    if (k > 0) {
      EXPECT_LT(here, DistanceTo(sequential[k], spec.width, spec.height, k - 1));
    }
    if (k + 1 < spec.frames) {
      EXPECT_LT(here, DistanceTo(sequential[k], spec.width, spec.height, k + 1));
    }
  }
}

constexpr ClipSpec kBase{.width = 320, .height = 96, .frames = 30, .fps = 5, .gop = 4};

ClipSpec With(const char* muxer, const char* encoder, int b_frames) {
  ClipSpec s = kBase;
  s.muxer = muxer;
  s.encoder = encoder;
  s.b_frames = b_frames;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Containers, VideoSeekTest,
    testing::Values(SeekCase{With("mp4", "mpeg4", 0), "mp4_mpeg4"},
                    SeekCase{With("mp4", "mpeg4", 2), "mp4_mpeg4_bframes"},
                    SeekCase{With("mp4", "libx264", 2), "mp4_h264_bframes"},
                    SeekCase{With("matroska", "libx264", 2), "mkv_h264_bframes"},
                    SeekCase{With("mpegts", "libx264", 2), "ts_h264_bframes"},
                    SeekCase{With("webm", "libvpx-vp9", 0), "webm_vp9"}),
    [](const testing::TestParamInfo<SeekCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace qvl
