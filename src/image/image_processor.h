// The image pipeline the engine calls: encoded bytes -> pixel_values for the vision
// tower. Decode (first frame, Pillow's RGB conversion, RGBA onto white), EXIF
// orientation, smart_resize, PIL-exact bicubic resampling, rescale + normalise, and
// patch flattening with temporal duplication. Matches transformers'
// Qwen2VLImageProcessor on Pillow bit for bit.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "image/bicubic_resize.h"
#include "image/image_budget.h"
#include "image/image_format.h"
#include "image/image_limits.h"
#include "image/image_size.h"
#include "image/preprocessor_config.h"
#include "image/rgbx_image.h"

namespace qvl {

struct PreprocessedImage {
  // [num_patches, params.patch_values()] row-major: patch rows in merge-block order, each
  // row (channel, frame, y, x). This is what the patch embedding multiplies.
  std::vector<float> pixel_values;
  // (t, h, w) in patches: t = 1 for an image, h = resized.height / patch_size, ...
  std::array<int64_t, 3> grid_thw = {0, 0, 0};
  ImageSize original;  // decoded size, after EXIF orientation
  ImageSize resized;   // after smart_resize
  ImageFormat format = ImageFormat::kJpeg;

  int64_t num_patches() const { return grid_thw[0] * grid_thw[1] * grid_thw[2]; }
};

// Image tokens an image occupies in the prompt: num_patches / merge_size^2.
int64_t NumImageTokens(const PreprocessedImage& image, const ImageProcessorParams& params);

class ImageWorkspace;

// Preprocesses one encoded image (JPEG, PNG, WebP, GIF or BMP, recognised from the
// bytes). `budget` narrows the pixel range within the model's (see image_budget.h).
// `name` ("image 2") starts every error message. Throws Error(kTooLarge) when the file
// or its pixel count is over `limits` (before decoding / before allocating pixels) and
// Error(kInvalidArgument) for empty, truncated, corrupt or unsupported files, images
// with a side under params.factor() pixels or an aspect ratio over 200, and a bad
// budget. `workspace` may be null (a temporary one is used); with a reused workspace
// the only allocations are the returned pixel_values and the codecs' own working
// memory. Thread-safe as long as each thread passes its own workspace.
PreprocessedImage PreprocessImage(std::span<const uint8_t> bytes,
                                  const ImageProcessorParams& params, const ImageBudget& budget,
                                  const ImageLimits& limits, const std::string& name,
                                  ImageWorkspace* workspace = nullptr);

// Decoded, oriented and resized pixels kept between calls so a worker preprocesses
// image after image without reallocating them. Not thread-safe: one per thread. It
// holds on to the largest image seen; call Release() to give the memory back.
class ImageWorkspace {
 public:
  void Release();

 private:
  friend PreprocessedImage PreprocessImage(std::span<const uint8_t>, const ImageProcessorParams&,
                                           const ImageBudget&, const ImageLimits&,
                                           const std::string&, ImageWorkspace*);
  RgbxImage decoded_;
  RgbxImage oriented_;
  RgbxImage resized_;
  ResizeScratch resize_;
  std::vector<uint8_t> scratch_;
};

}  // namespace qvl
