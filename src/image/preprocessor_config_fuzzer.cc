// libFuzzer target: preprocessor_config.json. An accepted config is then used the way
// the engine uses it: budgets resolved against it and a small fixture image preprocessed
// with it, so odd patch / merge sizes and pixel bounds reach the resize and patchify
// arithmetic. Only qvl::Error may come out; -rss_limit_mb catches a config that makes
// a small image allocate without bound.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "image/image_budget.h"
#include "image/image_processor.h"
#include "image/preprocessor_config.h"

namespace {

const std::vector<uint8_t>& FixtureImage() {
  static const std::vector<uint8_t>* bytes = [] {
    const std::string text = qvl::ReadFileToString(
        std::string(QVL_TEST_DATA) + "/tiny-qwen3vl/cases/05_tall_and_tiny/images/tiny.jpg");
    return new std::vector<uint8_t>(text.begin(), text.end());
  }();
  return *bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  qvl::ImageProcessorParams params;
  try {
    params = qvl::ParsePreprocessorConfig(text, "fuzz/preprocessor_config.json");
  } catch (const qvl::Error&) {
    return 0;
  }
  if (params.min_pixels < 1 || params.min_pixels > params.max_pixels || params.factor() < 1) {
    std::abort();  // the parser promises a usable range
  }
  try {
    const qvl::PixelRange range = qvl::ResolveImageBudget({}, params);
    if (range.min_pixels > range.max_pixels) std::abort();
    qvl::ImageBudgetFromTokens(1, 4, params);
  } catch (const qvl::Error&) {
  }
  // A config may legitimately ask for huge images (the real one allows 16M pixels); the
  // fuzzer asks for at most 1M so that memory stays bounded and findings are real.
  constexpr int64_t kMaxPixels = 1 << 20;
  if (params.min_pixels > kMaxPixels) return 0;
  qvl::ImageLimits limits;
  limits.max_decoded_pixels = kMaxPixels;
  try {
    const qvl::ImageBudget budget{.max_pixels = kMaxPixels};
    qvl::PreprocessImage(FixtureImage(), params, budget, limits, "fuzz image");
  } catch (const qvl::Error&) {
  }
  return 0;
}
