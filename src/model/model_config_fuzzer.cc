// libFuzzer target: config.json and generation_config.json. The input goes through both
// parsers (they share the JSON layer and the field readers), and an accepted config.json
// through ExpectedQwen3VLTensors, which turns its numbers into tensor names and shapes.
// Only qvl::Error may come out.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "model/config.h"
#include "model/weights.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const qvl::ModelConfig config = qvl::ParseModelConfig(text, "fuzz/config.json");
    for (const qvl::ExpectedTensor& t : qvl::ExpectedQwen3VLTensors(config)) {
      for (const int64_t d : t.shape) {
        if (d <= 0) std::abort();  // an accepted config never implies an empty tensor
      }
    }
  } catch (const qvl::Error&) {
  }
  try {
    qvl::ParseGenerationConfig(text, "fuzz/generation_config.json");
  } catch (const qvl::Error&) {
  }
  return 0;
}
