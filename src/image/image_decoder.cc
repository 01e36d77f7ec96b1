#include "image/image_decoder.h"

#include "base/error.h"
#include "image/format_decoders.h"

namespace qvl {

void FailTruncated(const std::string& name, const char* format) {
  Fail(ErrorCode::kInvalidArgument, name, ": the ", format, " data is truncated");
}

void FailCorrupt(const std::string& name, const char* format, const std::string& detail) {
  Fail(ErrorCode::kInvalidArgument, name, ": corrupt or unsupported ", format, " (", detail, ")");
}

ImageFormat RequireImageFormat(std::span<const uint8_t> bytes, const std::string& name) {
  const std::optional<ImageFormat> format = DetectImageFormat(bytes);
  if (format) return *format;
  const std::string_view known = RecognizeUnsupportedFormat(bytes);
  if (!known.empty()) {
    Fail(ErrorCode::kInvalidArgument, name, " is ", known,
         ", which qvl does not read; send JPEG, PNG, WebP, GIF or BMP");
  }
  Fail(ErrorCode::kInvalidArgument, name, " is not a JPEG, PNG, WebP, GIF or BMP image");
}

DecodedImageInfo DecodeImage(std::span<const uint8_t> bytes, const ImageLimits& limits,
                             const std::string& name, RgbxImage* out,
                             std::vector<uint8_t>* scratch) {
  if (bytes.empty()) Fail(ErrorCode::kInvalidArgument, name, " is empty (0 bytes)");
  if (static_cast<int64_t>(bytes.size()) > limits.max_encoded_bytes) {
    Fail(ErrorCode::kTooLarge, name, " is ", bytes.size(), " bytes; the limit is ",
         limits.max_encoded_bytes, " bytes");
  }
  DecodedImageInfo info;
  info.format = RequireImageFormat(bytes, name);
  switch (info.format) {
    case ImageFormat::kJpeg:
      info.orientation = DecodeJpeg(bytes, limits, name, out);
      break;
    case ImageFormat::kPng:
      info.orientation = DecodePng(bytes, limits, name, out, scratch);
      break;
    case ImageFormat::kWebp:
      info.orientation = DecodeWebp(bytes, limits, name, out);
      break;
    case ImageFormat::kGif:
      info.orientation = DecodeGif(bytes, limits, name, out, scratch);
      break;
    case ImageFormat::kBmp:
      info.orientation = DecodeBmp(bytes, limits, name, out);
      break;
  }
  return info;
}

}  // namespace qvl
