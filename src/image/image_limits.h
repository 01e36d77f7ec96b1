// Limits that protect the server from hostile or accidental huge images. Every check
// happens before the memory it guards is allocated: the encoded size before decoding,
// the decoded size right after the file header is read.
#pragma once

#include <cstdint>
#include <string>

namespace qvl {

// The largest pixel budget anything names (a preprocessor's size, a request's or a flag's
// min / max pixels): far above any real image, low enough that products of it stay in
// range.
inline constexpr int64_t kMaxPixelBudget = int64_t{1} << 40;

struct ImageLimits {
  // Largest accepted file (encoded bytes).
  int64_t max_encoded_bytes = int64_t{32} << 20;
  // Largest accepted width * height as stored in the file (decompression bombs). The
  // default allows 8192 x 8192; decoding needs about 4 bytes per pixel plus what the
  // codec buffers (a progressive JPEG keeps 2 bytes per sample).
  int64_t max_decoded_pixels = int64_t{8192} * 8192;
};

// Throws Error(kInvalidArgument) for a zero-sized image and Error(kTooLarge) when
// width * height is over max_decoded_pixels, naming the image.
void CheckDecodedSize(int64_t width, int64_t height, const ImageLimits& limits,
                      const std::string& name);

}  // namespace qvl
