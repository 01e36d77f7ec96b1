// Speed of the image pipeline on bench/bench-1024x768.jpg, the image
// bench/pillow_preprocess.py times for Pillow + numpy. Run
//   build/src/image/preprocess_benchmark --benchmark_repetitions=9
//   --benchmark_report_aggregates_only=true
// and compare the median with `/usr/bin/python3 bench/pillow_preprocess.py
// bench/bench-1024x768.jpg`.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "image/bicubic_resize.h"
#include "image/image_decoder.h"
#include "image/image_processor.h"
#include "image/patchify.h"

namespace qvl {
namespace {

const std::vector<uint8_t>& BenchImage() {
  static const std::vector<uint8_t> bytes = [] {
    const std::string text =
        ReadFileToString(std::string(QVL_TEST_DATA) + "/../../bench/bench-1024x768.jpg");
    return std::vector<uint8_t>(text.begin(), text.end());
  }();
  return bytes;
}

const ImageProcessorParams& Params() {
  static const ImageProcessorParams params = LoadPreprocessorConfig(
      std::string(QVL_TEST_DATA) + "/qwen3vl-2b-config/preprocessor_config.json");
  return params;
}

// QVL_CPU selects the kernel tier for the duration of one benchmark.
class ScopedTier {
 public:
  explicit ScopedTier(const benchmark::State& state) {
    if (state.range(0) == 0) setenv("QVL_CPU", "scalar", 1);
  }
  ~ScopedTier() { unsetenv("QVL_CPU"); }
};

// The whole pipeline as the engine runs it: 1024x768 stays 1024x768 (3072 patches).
void BM_Preprocess(benchmark::State& state) {
  const ScopedTier tier(state);
  ImageWorkspace workspace;
  for (auto _ : state) {
    PreprocessedImage image = PreprocessImage(BenchImage(), Params(), {}, {}, "bench", &workspace);
    benchmark::DoNotOptimize(image.pixel_values.data());
  }
}
BENCHMARK(BM_Preprocess)->Arg(1)->Arg(0)->ArgName("simd")->Unit(benchmark::kMillisecond);

// A 512-token budget downscales 1024x768 to 832x608: both resampling passes run.
void BM_PreprocessWithResize(benchmark::State& state) {
  const ScopedTier tier(state);
  ImageWorkspace workspace;
  const ImageBudget budget = ImageBudgetFromTokens(0, 512, Params());
  int64_t patches = 0;
  for (auto _ : state) {
    PreprocessedImage image =
        PreprocessImage(BenchImage(), Params(), budget, {}, "bench", &workspace);
    patches = image.num_patches();
    benchmark::DoNotOptimize(image.pixel_values.data());
  }
  state.counters["patches"] = static_cast<double>(patches);
}
BENCHMARK(BM_PreprocessWithResize)->Arg(1)->Arg(0)->ArgName("simd")->Unit(benchmark::kMillisecond);

void BM_DecodeJpeg(benchmark::State& state) {
  RgbxImage image;
  std::vector<uint8_t> scratch;
  for (auto _ : state) {
    DecodeImage(BenchImage(), {}, "bench", &image, &scratch);
    benchmark::DoNotOptimize(image.data());
  }
}
BENCHMARK(BM_DecodeJpeg)->Unit(benchmark::kMillisecond);

void BM_Patchify(benchmark::State& state) {
  const ScopedTier tier(state);
  RgbxImage image;
  std::vector<uint8_t> scratch;
  DecodeImage(BenchImage(), {}, "bench", &image, &scratch);
  const NormalizationTable table = MakeNormalizationTable(Params());
  std::vector<float> out(static_cast<size_t>(image.width()) * image.height() * 6);
  for (auto _ : state) {
    Patchify(image, table, {16, 2, 2}, out.data());
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_Patchify)->Arg(1)->Arg(0)->ArgName("simd")->Unit(benchmark::kMillisecond);

// Downscale 1024x768 -> 512x384 and upscale -> 1536x1152.
void BM_Resize(benchmark::State& state) {
  const ScopedTier tier(state);
  RgbxImage image, out;
  std::vector<uint8_t> scratch;
  DecodeImage(BenchImage(), {}, "bench", &image, &scratch);
  ResizeScratch resize;
  const ImageSize size = state.range(1) != 0 ? ImageSize{1536, 1152} : ImageSize{512, 384};
  for (auto _ : state) {
    BicubicResize(image, size, &resize, &out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_Resize)
    ->ArgsProduct({{1, 0}, {0, 1}})
    ->ArgNames({"simd", "up"})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace qvl

BENCHMARK_MAIN();
