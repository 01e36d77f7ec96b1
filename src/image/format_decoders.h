// One decoder per format (internal to image/; callers use DecodeImage). Each decodes
// the first frame of a file into RGBX with Pillow's conversion to RGB, checks the size
// against the limits as soon as the header is read, and returns the EXIF orientation
// (1 when the file has none). Errors are Error(kInvalidArgument) or Error(kTooLarge)
// whose message starts with the image name.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "image/image_limits.h"
#include "image/rgbx_image.h"

namespace qvl {

// `scratch` is reusable memory for rows or whole images in the file's own layout.
int DecodeJpeg(std::span<const uint8_t> bytes, const ImageLimits& limits, const std::string& name,
               RgbxImage* out);
int DecodePng(std::span<const uint8_t> bytes, const ImageLimits& limits, const std::string& name,
              RgbxImage* out, std::vector<uint8_t>* scratch);
int DecodeWebp(std::span<const uint8_t> bytes, const ImageLimits& limits, const std::string& name,
               RgbxImage* out);
int DecodeGif(std::span<const uint8_t> bytes, const ImageLimits& limits, const std::string& name,
              RgbxImage* out, std::vector<uint8_t>* scratch);
int DecodeBmp(std::span<const uint8_t> bytes, const ImageLimits& limits, const std::string& name,
              RgbxImage* out);

// "<name>: the <format> data is truncated".
[[noreturn]] void FailTruncated(const std::string& name, const char* format);
// "<name>: corrupt or unsupported <format>: <detail>".
[[noreturn]] void FailCorrupt(const std::string& name, const char* format,
                              const std::string& detail);

}  // namespace qvl
