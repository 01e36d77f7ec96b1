// libFuzzer target: a safetensors file's bytes (length prefix, JSON header, data
// section) through ParseSafetensors. Only qvl::Error may come out; a crash, a sanitizer
// report or an accepted tensor that does not lie inside the data is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string kPath = "fuzz/model.safetensors";
  std::map<std::string, std::string> metadata;
  try {
    const std::vector<qvl::TensorInfo> tensors =
        qvl::ParseSafetensors(data, size, &kPath, &metadata);
    for (const qvl::TensorInfo& t : tensors) {
      // Every accepted tensor lies inside the buffer and its byte count is dtype x shape.
      if (t.data < data || t.data + t.nbytes > data + size) std::abort();
      if (static_cast<size_t>(t.numel()) * qvl::DTypeSize(t.dtype) != t.nbytes) std::abort();
      volatile uint8_t sink = 0;
      if (t.nbytes > 0) sink = t.data[0] ^ t.data[t.nbytes - 1];
      (void)sink;
    }
  } catch (const qvl::Error&) {
  }
  return 0;
}
