// Image formats qvl decodes, recognised from the first bytes of the file (never from a
// file name or a MIME type, which clients get wrong).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace qvl {

enum class ImageFormat { kJpeg, kPng, kWebp, kGif, kBmp };

// "JPEG", "PNG", "WebP", "GIF", "BMP".
const char* ImageFormatName(ImageFormat format);

// The format whose signature `bytes` starts with, or nullopt.
std::optional<ImageFormat> DetectImageFormat(std::span<const uint8_t> bytes);

// For files qvl does not decode: the name of a well-known format they look like
// ("TIFF", "HEIF/AVIF", ...), or an empty view, so an error can say what was sent.
std::string_view RecognizeUnsupportedFormat(std::span<const uint8_t> bytes);

}  // namespace qvl
