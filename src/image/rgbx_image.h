// An 8-bit RGB image with each pixel stored in 4 bytes (R, G, B, 255). Every decoder
// writes this layout and the resampler and patchify read it: whole pixels are 32-bit
// lanes, which keeps the SIMD kernels simple. The buffer is reused across images.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace qvl {

class RgbxImage {
 public:
  static constexpr int kChannels = 4;
  // Bytes readable past the last pixel, so kernels may load a whole vector at the end
  // of a row without a bounds check (the extra bytes are never used).
  static constexpr size_t kPadding = 64;

  // Makes the image width x height; keeps the allocation if it is large enough.
  // Pixel contents are unspecified afterwards. Callers check sizes against the image
  // limits first; the byte count cannot overflow for sizes that pass those checks.
  void Reset(int width, int height) {
    const size_t bytes = static_cast<size_t>(width) * height * kChannels + kPadding;
    if (bytes > capacity_) {
      data_ = std::make_unique_for_overwrite<uint8_t[]>(bytes);
      capacity_ = bytes;
    }
    width_ = width;
    height_ = height;
  }

  // Returns the memory to the system.
  void Release() {
    data_.reset();
    capacity_ = 0;
    width_ = height_ = 0;
  }

  int width() const { return width_; }
  int height() const { return height_; }
  size_t stride() const { return static_cast<size_t>(width_) * kChannels; }
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  uint8_t* row(int y) { return data_.get() + y * stride(); }
  const uint8_t* row(int y) const { return data_.get() + y * stride(); }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_ = 0;
  int width_ = 0;
  int height_ = 0;
};

}  // namespace qvl
