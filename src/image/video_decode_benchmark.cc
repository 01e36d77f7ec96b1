// Decoding the frames a 10 s 720p H.264 clip at 30 fps gives the model (20 frames at the
// default 2 fps), with and without keyframe seeking and frame threads, for groups of
// pictures of 1 s (phones, streaming) and of libx264's default 250 frames. The clip is
// encoded in process once (libx264; grain brings it to a camera's few Mbit/s). Process
// CPU time counts the frame threads too. Run
//   build/src/image/video_decode_benchmark --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "image/video_clip_for_test.h"
#include "image/video_decoder.h"
#include "image/video_sampling.h"

namespace qvl {
namespace {

const std::string& Clip(int gop) {
  static std::string by_gop[2];
  std::string& clip = by_gop[gop == 30 ? 0 : 1];
  if (clip.empty()) {
    clip = EncodeClip({.encoder = "libx264",
                       .width = 1280,
                       .height = 720,
                       .frames = 300,
                       .fps = 30,
                       .gop = gop,
                       .b_frames = 2,
                       .noise = 4});
  }
  return clip;
}

// Args: group of pictures in frames, seek (0/1), frame threads.
void BM_DecodeSampledFrames(benchmark::State& state) {
  const std::string& clip = Clip(static_cast<int>(state.range(0)));
  if (clip.empty()) {
    state.SkipWithError("this libavcodec has no libx264 encoder");
    return;
  }
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(clip.data()), clip.size());
  const VideoDecodeOptions options{.seek = state.range(1) != 0,
                                   .threads = static_cast<int>(state.range(2))};
  RgbxImage frame;
  for (auto _ : state) {
    VideoFileDecoder decoder(bytes, {}, "video", options);
    for (const int64_t k : SampleFrameIndices(decoder.frame_count(), decoder.fps(), {}, "video")) {
      decoder.ReadFrame(k, &frame);
    }
    benchmark::DoNotOptimize(frame.data());
  }
}
BENCHMARK(BM_DecodeSampledFrames)
    ->ArgNames({"gop", "seek", "threads"})
    ->Args({30, 0, 1})
    ->Args({30, 0, 2})
    ->Args({30, 1, 1})
    ->Args({30, 1, 2})
    ->Args({250, 0, 1})
    ->Args({250, 1, 2})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

}  // namespace
}  // namespace qvl

BENCHMARK_MAIN();
