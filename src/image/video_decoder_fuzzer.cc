// libFuzzer target: arbitrary bytes through the video file path (FFmpeg's demuxers and
// decoders behind qvl's limits, frame sampling, smart_resize, resampling, patches) with
// small limits. Only qvl::Error may escape; a crash, a sanitizer report or an unbounded
// allocation is a finding. Build with -DQVL_FUZZ=ON and clang (see image_fuzzer.cc) and
// run e.g. `video_decoder_fuzzer -max_total_time=60 src/image/fuzz_corpus/video_decoder_fuzzer`.
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/error.h"
#include "image/video_decoder.h"
#include "image/video_processor.h"

namespace {

qvl::VideoProcessorParams FuzzParams() {
  qvl::VideoProcessorParams params;
  params.image.patch_size = 16;
  params.image.image_mean = {0.5f, 0.5f, 0.5f};
  params.image.image_std = {0.5f, 0.5f, 0.5f};
  params.image.min_pixels = 32 * 32;
  params.image.max_pixels = 8 * 128 * 128;
  params.sampling.max_frames = 8;
  return params;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const qvl::VideoProcessorParams params = FuzzParams();
  qvl::VideoLimits limits;
  limits.max_encoded_bytes = 1 << 20;
  limits.max_frame_pixels = 1 << 20;
  limits.max_input_frames = 1000;
  limits.max_seconds = 120;
  try {
    qvl::VideoFileDecoder decoder(std::span<const uint8_t>(data, size), limits, "fuzz input");
    qvl::PreprocessVideo(decoder, params, params.sampling, {}, limits, "fuzz input");
  } catch (const qvl::Error&) {
  }
  return 0;
}
