#include "image/video_processor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "golden_tensors.h"
#include "image/smart_resize.h"
#include "image/video_frame_list.h"
#include "image/video_sampling.h"

namespace qvl {
namespace {

using Json = nlohmann::json;

const std::string kData = QVL_TEST_DATA;
const std::string kCases = kData + "/tiny-qwen3vl/cases/";

VideoProcessorParams TinyVideoParams() {
  return LoadVideoPreprocessorConfig(kData + "/tiny-qwen3vl/model/video_preprocessor_config.json");
}

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(VideoSamplingTest, KeepsTwoFramesPerSecondAtLeastFour) {
  const FrameSampling defaults;
  // 07: 8 frames at 4 fps -> n = 4, linspace [0, 2.33, 4.67, 7].
  EXPECT_EQ(SampleFrameIndices(8, 4.0, defaults, "v"), (std::vector<int64_t>{0, 2, 5, 7}));
  // fps <= 2 keeps every frame (08: 5 frames at 1 fps).
  EXPECT_EQ(SampleFrameIndices(5, 1.0, defaults, "v"), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  // 100 frames at 10 fps: int(100 / 10 * 2) = 20, linspace step 99/19.
  const std::vector<int64_t> twenty = SampleFrameIndices(100, 10.0, defaults, "v");
  ASSERT_EQ(twenty.size(), 20u);
  for (size_t i = 0; i < twenty.size(); ++i) {
    EXPECT_EQ(twenty[i], static_cast<int64_t>(std::nearbyint(i * (99.0 / 19.0)))) << i;
  }
  // At least min_frames: 7 frames at 7 fps would give 2.
  EXPECT_EQ(SampleFrameIndices(7, 7.0, defaults, "v"), (std::vector<int64_t>{0, 2, 4, 6}));
  // Few frames: never more than there are; a long clip stops at max_frames.
  EXPECT_EQ(SampleFrameIndices(3, 30.0, defaults, "v"), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(SampleFrameIndices(100000, 1.0, defaults, "v").size(), 768u);
  FrameSampling one_fps{1.0, 4, 8};
  EXPECT_EQ(SampleFrameIndices(60, 10.0, one_fps, "v"),
            (std::vector<int64_t>{0, 12, 24, 35, 47, 59}));
}

TEST(VideoSamplingTest, RefusesNoFramesAndBadFps) {
  const FrameSampling defaults;
  EXPECT_EQ(ErrorOf([&] { SampleFrameIndices(0, 2.0, defaults, "video 1"); }),
            "video 1 has no frames");
  EXPECT_NE(ErrorOf([&] { SampleFrameIndices(8, 0.0, defaults, "video 1"); }).find("fps"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { SampleFrameIndices(8, NAN, defaults, "video 1"); }).find("fps"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { SampleFrameIndices(8, -1.0, defaults, "video 1"); }).find("fps"),
            std::string::npos);
}

TEST(VideoSamplingTest, GroupTimestampsPadOddCounts) {
  EXPECT_EQ(GroupTimestamps({0, 2, 5, 7}, 4.0, 2), (std::vector<double>{0.25, 1.5}));
  EXPECT_EQ(GroupTimestamps({0, 1, 2, 3, 4}, 1.0, 2), (std::vector<double>{0.5, 2.5, 4.0}));
  EXPECT_EQ(GroupTimestamps({0, 1, 2}, 1.0, 3), (std::vector<double>{1.0}));
}

TEST(SmartResizeVideoTest, BudgetCoversAllFrames) {
  // The fixture sizes: 320x240 (4 frames) -> 320x256; 256x200 (5 frames) -> 256x192.
  EXPECT_EQ(SmartResizeVideo({320, 240}, 4, 2, 32, 4096, 25165824, "v"), (ImageSize{320, 256}));
  EXPECT_EQ(SmartResizeVideo({256, 200}, 5, 2, 32, 4096, 25165824, "v"), (ImageSize{256, 192}));
  // 768 frames of 1280x720: t*h*w = 768 * 1280 * 704 is over the budget, so
  // beta = sqrt(768 * 1280 * 720 / 25165824) = 5.30 shrinks both sides.
  EXPECT_EQ(SmartResizeVideo({1280, 720}, 768, 2, 32, 4096, 25165824, "v"), (ImageSize{224, 128}));
  // Below the minimum the frames grow: 2 frames of 32x32 is 2048 < 4096.
  EXPECT_EQ(SmartResizeVideo({32, 32}, 2, 2, 32, 4096, 25165824, "v"), (ImageSize{64, 64}));
  EXPECT_NE(ErrorOf([] {
              SmartResizeVideo({320, 240}, 1, 2, 32, 4096, 25165824, "video 1");
            }).find("video 1 has 1 sampled frame; a video needs at least 2"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              SmartResizeVideo({20, 240}, 4, 2, 32, 4096, 25165824, "video 1");
            }).find("at least 32 pixels"),
            std::string::npos);
}

TEST(VideoConfigTest, ReadsSamplingAndBudget) {
  const VideoProcessorParams tiny = TinyVideoParams();
  EXPECT_EQ(tiny.image.min_pixels, 4096);
  EXPECT_EQ(tiny.image.max_pixels, 25165824);
  EXPECT_EQ(tiny.image.patch_size, 16);
  EXPECT_EQ(tiny.sampling.fps, 2.0);
  EXPECT_EQ(tiny.sampling.min_frames, 4);
  EXPECT_EQ(tiny.sampling.max_frames, 768);
  const VideoProcessorParams custom =
      ParseVideoPreprocessorConfig(R"({"fps": 1, "min_frames": 2, "max_frames": 64})", "v.json");
  EXPECT_EQ(custom.sampling.fps, 1.0);
  EXPECT_EQ(custom.sampling.min_frames, 2);
  EXPECT_EQ(custom.sampling.max_frames, 64);
  EXPECT_NE(ErrorOf([] {
              ParseVideoPreprocessorConfig(R"({"fps": 0})", "v.json");
            }).find("v.json: field 'fps'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              ParseVideoPreprocessorConfig(R"({"max_frames": "8"})", "v.json");
            }).find("v.json: field 'max_frames'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              ParseVideoPreprocessorConfig(R"({"min_frames": 9, "max_frames": 8})", "v.json");
            }).find("min_frames"),
            std::string::npos);
}

// The frames of a fixture video as the list form sends them.
struct CaseFrames {
  std::vector<std::string> files;
  std::vector<std::span<const uint8_t>> spans() const {
    std::vector<std::span<const uint8_t>> s;
    for (const std::string& f : files)
      s.emplace_back(reinterpret_cast<const uint8_t*>(f.data()), f.size());
    return s;
  }
};

class VideoCaseTest : public testing::TestWithParam<std::string> {};

// Every video of the case: sampled indices, timestamps, sizes, grid and
// pixel_values_videos bit for bit.
TEST_P(VideoCaseTest, FrameListMatchesGoldenPixelValues) {
  const std::string dir = kCases + GetParam() + "/";
  const Json meta = Json::parse(ReadFileToString(dir + "meta.json"));
  const GoldenTensors golden(dir);
  const VideoProcessorParams params = TinyVideoParams();
  std::vector<float> pixel_values;
  std::vector<int64_t> grids;
  int index = 0;
  for (const Json& video : meta.at("videos")) {
    ++index;
    CaseFrames frames;
    for (const Json& f : video.at("frames"))
      frames.files.push_back(ReadFileToString(dir + f.get<std::string>()));
    VideoFrameList list(frames.spans(), video.at("fps").get<double>(), {}, StrCat("video ", index));
    const PreprocessedVideo v = PreprocessVideo(list, params, params.sampling, {}, {}, "video");
    EXPECT_EQ(v.input_frames, video.at("num_input_frames"));
    EXPECT_EQ(v.sampled_indices, video.at("sampled_indices").get<std::vector<int64_t>>());
    EXPECT_EQ(v.timestamps, video.at("timestamps").get<std::vector<double>>());
    EXPECT_EQ(v.original.height, video.at("orig_hw")[0]);
    EXPECT_EQ(v.original.width, video.at("orig_hw")[1]);
    EXPECT_EQ(v.resized.height, video.at("resized_hw")[0]);
    EXPECT_EQ(v.resized.width, video.at("resized_hw")[1]);
    EXPECT_EQ(v.num_patches(), video.at("num_patches"));
    EXPECT_EQ(v.tokens_per_group(params.image.merge_size), video.at("tokens_per_group"));
    pixel_values.insert(pixel_values.end(), v.pixel_values.begin(), v.pixel_values.end());
    grids.insert(grids.end(), v.grid_thw.begin(), v.grid_thw.end());
  }
  EXPECT_EQ(grids, golden.I64("video_grid_thw"));
  const int64_t rows = static_cast<int64_t>(pixel_values.size()) / params.image.patch_values();
  EXPECT_EQ(golden.Mismatch("pixel_values_videos",
                            RawF32Tensor(pixel_values, {rows, params.image.patch_values()}), 0),
            "")
      << "not bit-identical";
}

INSTANTIATE_TEST_SUITE_P(Cases, VideoCaseTest,
                         testing::Values("07_video_frames", "08_video_and_image"));

// A source of synthetic frames, to check what PreprocessVideo asks of it. Frames
// outside [first_decodable, last_decodable] do not decode, as VideoFileDecoder tells.
class SyntheticFrames : public VideoFrameSource {
 public:
  SyntheticFrames(int64_t count, double fps, ImageSize size)
      : last_decodable(count - 1), count_(count), fps_(fps), size_(size) {}
  int64_t frame_count() const override { return count_; }
  double fps() const override { return fps_; }
  int64_t ReadFrame(int64_t index, RgbxImage* out) override {
    EXPECT_GT(index, last_);
    EXPECT_LT(index, count_);
    last_ = index;
    read.push_back(index);
    int64_t shown = std::max(index, first_decodable);
    if (shown > last_decodable) {
      shown = last_decodable;
      count_ = last_decodable + 1;
    }
    const ImageSize s = shown == odd_frame ? ImageSize{size_.width + 32, size_.height} : size_;
    out->Reset(s.width, s.height);
    for (size_t i = 0; i < out->stride() * s.height; ++i)
      out->data()[i] = static_cast<uint8_t>(i + shown);
    return shown;
  }
  std::vector<int64_t> read;
  int64_t odd_frame = -1;
  int64_t first_decodable = 0;
  int64_t last_decodable;

 private:
  int64_t count_;
  double fps_;
  ImageSize size_;
  int64_t last_ = -1;
};

TEST(PreprocessVideoTest, ReadsOnlySampledFramesAndRepeatsTheLast) {
  const VideoProcessorParams params = TinyVideoParams();
  SyntheticFrames source(30, 10.0, {64, 64});  // 30 frames at 10 fps -> 6 sampled
  const PreprocessedVideo v = PreprocessVideo(source, params, params.sampling, {}, {}, "video 1");
  EXPECT_EQ(source.read, (std::vector<int64_t>{0, 6, 12, 17, 23, 29}));
  EXPECT_EQ(v.grid_thw, (std::array<int64_t, 3>{3, 4, 4}));

  SyntheticFrames odd(3, 1.0, {64, 64});
  const PreprocessedVideo o = PreprocessVideo(odd, params, params.sampling, {}, {}, "video 1");
  ASSERT_EQ(o.grid_thw[0], 2);
  // The second frame of the last group is the third frame again.
  const size_t row = params.image.patch_values(), plane = 16 * 16;
  const float* last_group = o.pixel_values.data() + 16 * row;
  for (size_t c = 0; c < 3; ++c) {
    for (size_t i = 0; i < plane; ++i) {
      ASSERT_EQ(last_group[(c * 2 + 0) * plane + i], last_group[(c * 2 + 1) * plane + i]);
    }
  }
  // (u8 - 127.5) / 127.5 exactly.
  EXPECT_EQ(o.pixel_values[0], (static_cast<float>(static_cast<uint8_t>(0)) - 127.5f) / 127.5f);
}

TEST(PreprocessVideoTest, RefusesBadClips) {
  const VideoProcessorParams params = TinyVideoParams();
  // A clip of one frame is a picture, and one sampled frame too few; each is told what
  // to do instead.
  SyntheticFrames one(1, 1.0, {64, 64});
  EXPECT_EQ(ErrorOf([&] { PreprocessVideo(one, params, params.sampling, {}, {}, "video 1"); }),
            "video 1 has 1 frame; a video needs at least 2 (send a still picture as an image)");
  SyntheticFrames second(30, 30.0, {64, 64});
  FrameSampling sparse{.fps = 0.5, .min_frames = 1};
  EXPECT_EQ(ErrorOf([&] { PreprocessVideo(second, params, sparse, {}, {}, "video 1"); }),
            "video 1: 1 of its 30 frames sampled; a video needs at least 2 (raise min_frames, "
            "num_frames or fps)");
  SyntheticFrames mixed(4, 1.0, {64, 64});
  mixed.odd_frame = 2;
  EXPECT_NE(ErrorOf([&] {
              PreprocessVideo(mixed, params, params.sampling, {}, {}, "video 1");
            }).find("all frames of a video must have one size"),
            std::string::npos);
  SyntheticFrames long_clip(100000, 1.0, {64, 64});
  VideoLimits limits;
  try {
    PreprocessVideo(long_clip, params, params.sampling, {}, limits, "video 1");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
    EXPECT_NE(std::string(e.what()).find("has more than 36000 frames"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(long_clip.read.empty());
  limits.max_seconds = 10;
  SyntheticFrames slow(40, 2.0, {64, 64});
  EXPECT_NE(ErrorOf([&] {
              PreprocessVideo(slow, params, params.sampling, {}, limits, "video 1");
            }).find("20 seconds long; at most 10"),
            std::string::npos);
}

// A per-frame bound gives the frame size qwen-vl-utils' per-frame smart_resize gives,
// and a clip bound covers all sampled frames.
TEST(PreprocessVideoTest, FrameAndClipBudgets) {
  const VideoProcessorParams params = TinyVideoParams();
  const int factor = params.image.factor();
  SyntheticFrames source(30, 10.0, {640, 480});  // 6 sampled frames
  VideoBudget per_frame;
  per_frame.max_frame_pixels = 160 * 120;
  const PreprocessedVideo v =
      PreprocessVideo(source, params, params.sampling, per_frame, {}, "video 1");
  const ImageSize frame = SmartResize({640, 480}, factor, 1, 160 * 120, "frame");
  EXPECT_EQ(v.resized, frame);
  EXPECT_LE(v.resized.width * v.resized.height, 160 * 120);

  SyntheticFrames again(30, 10.0, {640, 480});
  VideoBudget clip;
  clip.max_pixels = 64 * PixelsPerVideoToken(params.image);  // 64 tokens over 3 pairs
  const PreprocessedVideo c = PreprocessVideo(again, params, params.sampling, clip, {}, "video 1");
  const int64_t tokens = c.num_patches() / (params.image.merge_size * params.image.merge_size);
  EXPECT_LE(tokens, 64);
  EXPECT_GT(tokens, 32);
  EXPECT_EQ(c.resized, SmartResizeVideo({640, 480}, 6, 2, factor, params.image.min_pixels,
                                        clip.max_pixels, "video 1"));
}

// A 10-minute clip at 1 fps samples its 600 frames at 2 fps: 300 pairs, whose text
// alone (10 tokens a pair here) is past a budget of 2048 tokens. Left to the server, it
// samples fewer frames from its first to its last, each pair of its own 320 x 256
// pixels (80 tokens, under kLeastTokensPerFramePair): 22 pairs of 90 tokens fit.
TEST(PreprocessVideoTest, ALongClipLeftToTheServerSamplesWhatFitsOverItsWholeLength) {
  const VideoProcessorParams params = TinyVideoParams();
  VideoBudget budget{.default_max_tokens = 2048};
  budget.text_tokens = [](std::span<const double> pair_seconds) {
    return static_cast<int64_t>(10 * pair_seconds.size());
  };
  FrameSampling sampling = params.sampling;
  sampling.fit_to_budget = true;
  SyntheticFrames source(600, 1.0, {320, 256});
  const PreprocessedVideo v = PreprocessVideo(source, params, sampling, budget, {}, "video 1");
  EXPECT_EQ(v.frames_at_rate, 600);
  ASSERT_EQ(v.sampled_indices.size(), 44u);
  EXPECT_EQ(source.read, v.sampled_indices);
  EXPECT_EQ(v.sampled_indices.front(), 0);
  EXPECT_EQ(v.sampled_indices.back(), 599);
  ASSERT_EQ(v.timestamps.size(), 22u);
  EXPECT_LT(v.timestamps.front(), 14);  // a pair every ~27.9 s
  EXPECT_GT(v.timestamps.back(), 585);
  EXPECT_EQ(v.resized, (ImageSize{320, 256}));
  const int64_t tokens = v.num_patches() / (params.image.merge_size * params.image.merge_size);
  EXPECT_EQ(tokens + v.text_tokens, 22 * 90);

  // A clip whose frames at the rate fit keeps them.
  SyntheticFrames short_clip(20, 1.0, {320, 256});
  EXPECT_EQ(PreprocessVideo(short_clip, params, sampling, budget, {}, "video 1").frames_at_rate, 0);

  // The client's own sampling is kept, and so refused.
  SyntheticFrames again(600, 1.0, {320, 256});
  EXPECT_NE(ErrorOf([&] {
              PreprocessVideo(again, params, params.sampling, budget, {}, "video 1");
            }).find("more than its video budget of 2048 tokens; sample at most about"),
            std::string::npos);
}

// The frame each pair of a preprocessed video of SyntheticFrames shows, as the red
// value of its first pixel tells (the frame's index, for a clip kept at its size).
std::vector<int64_t> FramesOfPairs(const PreprocessedVideo& v, const VideoProcessorParams& params) {
  const size_t group =
      static_cast<size_t>(v.grid_thw[1] * v.grid_thw[2]) * params.image.patch_values();
  const size_t plane = static_cast<size_t>(params.image.patch_size) * params.image.patch_size;
  std::vector<int64_t> frames;
  for (int64_t g = 0; g < v.grid_thw[0]; ++g) {
    for (size_t f = 0; f < 2; ++f) {
      frames.push_back(std::lround(v.pixel_values[g * group + f * plane] * 127.5f + 127.5f));
    }
  }
  return frames;
}

void ExpectTimes(const std::vector<double>& seconds, const std::vector<double>& expected) {
  ASSERT_EQ(seconds.size(), expected.size());
  for (size_t i = 0; i < seconds.size(); ++i) EXPECT_DOUBLE_EQ(seconds[i], expected[i]) << i;
}

// 30 frames at 10 fps whose packets promise 30 but whose stream ends after frame 20: the
// frames sampled (0, 6, 12, 17, 23, 29) up to the end are kept, the last that decodes
// (20) stands for 23 at its own time, and 29 is left out where it was frame 20 again at
// 2.9 s. The pairs show distinct frames but for the padding of an odd count.
TEST(PreprocessVideoTest, AStreamEndingEarlyShowsEachFrameOnceAtItsTime) {
  const VideoProcessorParams params = TinyVideoParams();
  SyntheticFrames source(30, 10.0, {64, 64});
  source.last_decodable = 20;
  const PreprocessedVideo v = PreprocessVideo(source, params, params.sampling, {}, {}, "video 1");
  EXPECT_EQ(source.read, (std::vector<int64_t>{0, 6, 12, 17, 23}));
  EXPECT_EQ(v.sampled_indices, (std::vector<int64_t>{0, 6, 12, 17, 20}));
  EXPECT_EQ(FramesOfPairs(v, params), (std::vector<int64_t>{0, 6, 12, 17, 20, 20}));
  ExpectTimes(v.timestamps, {0.3, 1.45, 2.0});
  EXPECT_EQ(v.grid_thw, (std::array<int64_t, 3>{3, 4, 4}));
  EXPECT_EQ(v.pixel_values.size(), 3 * 16 * params.image.patch_values());
  EXPECT_EQ(v.input_frames, 21);
  EXPECT_EQ(v.promised_frames, 30);
  EXPECT_EQ(v.frames_left_out, 1);
}

// A stream whose first 8 frames do not decode (a recording that starts after a
// keyframe): frame 8 is its first frame, at 0.8 s, and sampled frame 6 is left out
// where it was frame 8 again.
TEST(PreprocessVideoTest, FramesThatDoNotDecodeAreLeftOutNotRepeated) {
  const VideoProcessorParams params = TinyVideoParams();
  SyntheticFrames source(30, 10.0, {64, 64});
  source.first_decodable = 8;
  const PreprocessedVideo v = PreprocessVideo(source, params, params.sampling, {}, {}, "video 1");
  EXPECT_EQ(source.read, (std::vector<int64_t>{0, 12, 17, 23, 29}));
  EXPECT_EQ(v.sampled_indices, (std::vector<int64_t>{8, 12, 17, 23, 29}));
  EXPECT_EQ(FramesOfPairs(v, params), (std::vector<int64_t>{8, 12, 17, 23, 29, 29}));
  ExpectTimes(v.timestamps, {1.0, 2.0, 2.9});
  EXPECT_EQ(v.input_frames, 30);
  EXPECT_EQ(v.promised_frames, 0);
  EXPECT_EQ(v.frames_left_out, 1);

  // One frame that decodes is a picture, not a video.
  SyntheticFrames one(30, 10.0, {64, 64});
  one.first_decodable = one.last_decodable = 5;
  EXPECT_EQ(ErrorOf([&] { PreprocessVideo(one, params, params.sampling, {}, {}, "video 1"); }),
            "video 1: of its 30 frames only frame 5 decodes; a video needs at least 2 (send a "
            "still picture as an image)");
  EXPECT_EQ(one.read, (std::vector<int64_t>{0, 6}));
}

}  // namespace
}  // namespace qvl
