// WebP through libwebp. Pillow opens a WebP as RGBA when the bitstream features say it
// has alpha (composited onto white later) and as RGB otherwise, and decodes through
// WebPAnimDecoder in RGBA with default options. A still image decodes the same through
// WebPDecode (default options: fancy upsampling), which writes straight into our buffer;
// an animation goes through WebPAnimDecoder and keeps the first frame as composed on
// the (transparent) canvas.
#include <webp/decode.h>
#include <webp/demux.h>

#include <cstring>
#include <string_view>

#include "base/error.h"
#include "image/exif_orientation.h"
#include "image/format_decoders.h"
#include "image/pixel_convert.h"

namespace qvl {
namespace {

const char* StatusText(VP8StatusCode status) {
  switch (status) {
    case VP8_STATUS_OUT_OF_MEMORY:
      return "out of memory";
    case VP8_STATUS_INVALID_PARAM:
      return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR:
      return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      return "unsupported feature";
    case VP8_STATUS_SUSPENDED:
      return "suspended";
    case VP8_STATUS_USER_ABORT:
      return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA:
      return "not enough data";
    default:
      return "unknown error";
  }
}

[[noreturn]] void FailStatus(const std::string& name, VP8StatusCode status) {
  if (status == VP8_STATUS_NOT_ENOUGH_DATA) FailTruncated(name, "WebP");
  FailCorrupt(name, "WebP", StatusText(status));
}

void DecodeStill(std::span<const uint8_t> bytes, const std::string& name, RgbxImage* out) {
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) Fail(ErrorCode::kInternal, name, ": libwebp mismatch");
  config.output.colorspace = MODE_RGBA;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = out->data();
  config.output.u.RGBA.stride = static_cast<int>(out->stride());
  config.output.u.RGBA.size = out->stride() * out->height();
  const VP8StatusCode status = WebPDecode(bytes.data(), bytes.size(), &config);
  WebPFreeDecBuffer(&config.output);
  if (status != VP8_STATUS_OK) FailStatus(name, status);
}

struct AnimDecoderGuard {
  WebPAnimDecoder* decoder;
  ~AnimDecoderGuard() { WebPAnimDecoderDelete(decoder); }
};

struct DemuxGuard {
  WebPDemuxer* demux;
  ~DemuxGuard() { WebPDemuxDelete(demux); }
};

void DecodeFirstFrame(std::span<const uint8_t> bytes, const std::string& name, RgbxImage* out) {
  const WebPData data{bytes.data(), bytes.size()};
  WebPAnimDecoderOptions options;
  if (!WebPAnimDecoderOptionsInit(&options)) {
    Fail(ErrorCode::kInternal, name, ": libwebp mismatch");
  }
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  AnimDecoderGuard decoder{WebPAnimDecoderNew(&data, &options)};
  if (decoder.decoder == nullptr) {
    WebPDemuxState state = WEBP_DEMUX_PARSE_ERROR;
    DemuxGuard partial{WebPDemuxPartial(&data, &state)};
    if (state == WEBP_DEMUX_PARSING_HEADER || state == WEBP_DEMUX_PARSED_HEADER) {
      FailTruncated(name, "WebP");
    }
    FailCorrupt(name, "WebP", "the animation container is invalid");
  }
  WebPAnimInfo info;
  if (!WebPAnimDecoderGetInfo(decoder.decoder, &info) ||
      static_cast<int>(info.canvas_width) != out->width() ||
      static_cast<int>(info.canvas_height) != out->height()) {
    FailCorrupt(name, "WebP", "the animation canvas does not match the header");
  }
  uint8_t* canvas = nullptr;
  int timestamp = 0;
  if (!WebPAnimDecoderGetNext(decoder.decoder, &canvas, &timestamp)) {
    FailCorrupt(name, "WebP", "the first animation frame does not decode");
  }
  std::memcpy(out->data(), canvas, out->stride() * out->height());
}

int WebpOrientation(std::span<const uint8_t> bytes) {
  const WebPData data{bytes.data(), bytes.size()};
  DemuxGuard demux{WebPDemux(&data)};
  if (demux.demux == nullptr) return 1;
  WebPChunkIterator chunk;
  std::optional<int> orientation;
  if (WebPDemuxGetChunk(demux.demux, "EXIF", 1, &chunk)) {
    orientation = ExifOrientation({chunk.chunk.bytes, chunk.chunk.size});
    WebPDemuxReleaseChunkIterator(&chunk);
  }
  if (!orientation && WebPDemuxGetChunk(demux.demux, "XMP ", 1, &chunk)) {
    orientation = XmpOrientation(
        std::string_view(reinterpret_cast<const char*>(chunk.chunk.bytes), chunk.chunk.size));
    WebPDemuxReleaseChunkIterator(&chunk);
  }
  return orientation.value_or(1);
}

}  // namespace

int DecodeWebp(std::span<const uint8_t> bytes, const ImageLimits& limits, const std::string& name,
               RgbxImage* out) {
  WebPBitstreamFeatures features;
  const VP8StatusCode status = WebPGetFeatures(bytes.data(), bytes.size(), &features);
  if (status != VP8_STATUS_OK) FailStatus(name, status);
  CheckDecodedSize(features.width, features.height, limits, name);
  out->Reset(features.width, features.height);
  if (features.has_animation) {
    DecodeFirstFrame(bytes, name, out);
  } else {
    DecodeStill(bytes, name, out);
  }
  for (int y = 0; y < out->height(); ++y) {
    uint8_t* row = out->row(y);
    if (features.has_alpha) {
      CompositeRowOnWhite(row, out->width());
    } else {
      for (int x = 0; x < out->width(); ++x) row[4 * x + 3] = 255;
    }
  }
  return WebpOrientation(bytes);
}

}  // namespace qvl
