// libFuzzer target: arbitrary bytes through the whole image pipeline (format
// detection, every decoder, EXIF, smart_resize, the resampler, patchify) with small
// limits. Only qvl::Error may escape a decoder; anything else (a crash, a sanitizer
// report, std::bad_alloc from an unbounded allocation) is a finding. Build with
//   CC=clang CXX=clang++ cmake -DQVL_FUZZ=ON ... (ASan and UBSan come with it)
// and run e.g. `image_fuzzer -max_total_time=60 src/image/fuzz_corpus/image_fuzzer`.
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/error.h"
#include "image/image_processor.h"

namespace {

qvl::ImageProcessorParams FuzzParams() {
  qvl::ImageProcessorParams params;
  params.patch_size = 16;
  params.image_mean = {0.5f, 0.5f, 0.5f};
  params.image_std = {0.5f, 0.5f, 0.5f};
  params.min_pixels = 32 * 32;
  params.max_pixels = 256 * 256;
  return params;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const qvl::ImageProcessorParams params = FuzzParams();
  static qvl::ImageWorkspace workspace;
  qvl::ImageLimits limits;
  limits.max_encoded_bytes = 1 << 20;
  limits.max_decoded_pixels = 1 << 20;
  // The first byte picks the budget, so small and large targets both get resized.
  const int64_t max_pixels = size > 0 ? 1024 * (1 + data[0] % 64) : 0;
  try {
    qvl::PreprocessImage(std::span<const uint8_t>(data, size), params, {.max_pixels = max_pixels},
                         limits, "fuzz input", &workspace);
  } catch (const qvl::Error&) {
  }
  return 0;
}
