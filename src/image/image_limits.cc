#include "image/image_limits.h"

#include "base/error.h"

namespace qvl {

void CheckDecodedSize(int64_t width, int64_t height, const ImageLimits& limits,
                      const std::string& name) {
  if (width <= 0 || height <= 0) {
    Fail(ErrorCode::kInvalidArgument, name, " has no pixels (", width, "x", height, ")");
  }
  // Keeps per-row index arithmetic within int; no valid image comes close (smart_resize
  // refuses aspect ratios over 200).
  constexpr int64_t kMaxSide = int64_t{1} << 24;
  if (width > kMaxSide || height > kMaxSide) {
    Fail(ErrorCode::kTooLarge, name, " is ", width, "x", height, " pixels; a side may be at most ",
         kMaxSide, " pixels");
  }
  // Division instead of width * height: the product of two header fields may overflow.
  if (width > limits.max_decoded_pixels / height) {
    Fail(ErrorCode::kTooLarge, name, " is ", width, "x", height, " pixels; the limit is ",
         limits.max_decoded_pixels, " pixels");
  }
}

}  // namespace qvl
