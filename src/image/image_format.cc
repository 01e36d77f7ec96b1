#include "image/image_format.h"

#include <cstring>

namespace qvl {
namespace {

bool StartsWith(std::span<const uint8_t> bytes, std::string_view prefix, size_t offset = 0) {
  return bytes.size() >= offset + prefix.size() &&
         std::memcmp(bytes.data() + offset, prefix.data(), prefix.size()) == 0;
}

}  // namespace

const char* ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg:
      return "JPEG";
    case ImageFormat::kPng:
      return "PNG";
    case ImageFormat::kWebp:
      return "WebP";
    case ImageFormat::kGif:
      return "GIF";
    case ImageFormat::kBmp:
      return "BMP";
  }
  return "unknown";
}

std::optional<ImageFormat> DetectImageFormat(std::span<const uint8_t> bytes) {
  using namespace std::string_view_literals;
  if (StartsWith(bytes, "\xFF\xD8\xFF"sv)) return ImageFormat::kJpeg;
  if (StartsWith(bytes, "\x89PNG\r\n\x1A\n"sv)) return ImageFormat::kPng;
  if (StartsWith(bytes, "RIFF"sv) && StartsWith(bytes, "WEBP"sv, 8)) return ImageFormat::kWebp;
  if (StartsWith(bytes, "GIF87a"sv) || StartsWith(bytes, "GIF89a"sv)) return ImageFormat::kGif;
  if (StartsWith(bytes, "BM"sv)) return ImageFormat::kBmp;
  return std::nullopt;
}

std::string_view RecognizeUnsupportedFormat(std::span<const uint8_t> bytes) {
  using namespace std::string_view_literals;
  if (StartsWith(bytes, "II*\0"sv) || StartsWith(bytes, "MM\0*"sv)) return "TIFF";
  if (StartsWith(bytes, "ftyp"sv, 4)) return "HEIF/AVIF (or another ISO media file)";
  if (StartsWith(bytes, "\xFF\x0A"sv) || StartsWith(bytes, "\0\0\0\x0CJXL "sv)) return "JPEG XL";
  if (StartsWith(bytes, "%PDF"sv)) return "PDF";
  if (StartsWith(bytes, "8BPS"sv)) return "Photoshop (PSD)";
  if (StartsWith(bytes, "\0\0\1\0"sv)) return "ICO";
  if (StartsWith(bytes, "<"sv) || StartsWith(bytes, "\xEF\xBB\xBF<"sv))
    return "text (SVG/HTML/XML)";
  return {};
}

}  // namespace qvl
