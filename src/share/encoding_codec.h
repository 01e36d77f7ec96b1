// A vision encoding (VisionOutput: the merged image tokens and the DeepStack taps) as
// bytes for a shared cache, in a value envelope (version, key check, checksum). Floats
// are stored as they are, so a shared encoding gives answers identical to a local one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/vision_tower.h"

namespace qvl {

// The encoding format; a change to the layout or to what an encoding means bumps it.
constexpr uint32_t kEncodingFormatVersion = 1;

// What an encoding of this model must look like.
struct EncodingShape {
  int64_t tokens = 0;  // merged tokens of the image
  int64_t dim = 0;     // the decoder's hidden size
  size_t deepstack_layers = 0;
};

std::string EncodeVisionOutput(std::string_view key, const VisionOutput& out);

// nullopt unless `value` was encoded under `key` by this format and has `shape`.
std::optional<VisionOutput> DecodeVisionOutput(std::string_view key, std::string_view value,
                                               const EncodingShape& shape);

}  // namespace qvl
