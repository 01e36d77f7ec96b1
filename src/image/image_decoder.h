// Decoding any supported file into RGB pixels, exactly as the reference pipeline
// (Pillow) would: the first frame, converted to RGB with PIL's rules, alpha composited
// onto white for images PIL opens as RGBA. EXIF orientation is reported, not applied.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "image/image_format.h"
#include "image/image_limits.h"
#include "image/rgbx_image.h"

namespace qvl {

struct DecodedImageInfo {
  ImageFormat format = ImageFormat::kJpeg;
  // EXIF orientation 1..8 (other values mean "as stored"); 1 when the file has none.
  int orientation = 1;
};

// The format of `bytes`, or Error(kInvalidArgument) naming `name` when it is none that
// qvl decodes (and which it is, when it is a known one: HEIC, TIFF, ...).
ImageFormat RequireImageFormat(std::span<const uint8_t> bytes, const std::string& name);

// Decodes `bytes` into `out`. The format comes from the bytes alone. `name` ("image 2")
// starts every error message. Throws Error(kTooLarge) over the byte or pixel limits
// (checked before the memory is allocated) and Error(kInvalidArgument) for empty,
// truncated, corrupt or unsupported files. `scratch` is reused memory for decoders that
// need a copy in the file's own layout. Thread-safe for distinct out/scratch.
DecodedImageInfo DecodeImage(std::span<const uint8_t> bytes, const ImageLimits& limits,
                             const std::string& name, RgbxImage* out,
                             std::vector<uint8_t>* scratch);

}  // namespace qvl
