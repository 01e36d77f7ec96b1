// PNG through libpng, converted to RGB the way Pillow opens and converts each PNG type
// (PngImagePlugin modes, then convert("RGB") or, for mode RGBA, paste onto white):
//   grey 1/2/4/8 bit   -> L: R = G = B (low depths scaled by bit replication)
//   grey 16 bit        -> I;16: convert("RGB") clips, v > 255 becomes 255 (Pillow's
//                         I16_RGB / i2rgb: "in[1] == 0 ? in[0] : 255"), NOT v >> 8
//   grey+alpha 8 bit   -> LA: alpha is dropped
//   grey+alpha 16 bit  -> RGBA from the high bytes ("LA;16B"), composited onto white
//   RGB 8/16 bit       -> RGB, 16-bit samples keep their high byte ("RGB;16B")
//   RGBA 8/16 bit      -> RGBA (high bytes), composited onto white
//   palette 1/2/4/8    -> P: palette lookup; tRNS is ignored (convert("RGB") drops it)
// tRNS on grey/RGB images is likewise ignored; gamma and ICC profiles are not applied.
//
// libpng reports fatal errors by longjmp to the setjmp in ReadPngPixels/ReadPngEnd.
// Those functions own no C++ objects (state lives in PngJob, owned by the caller).
#include <png.h>

#include <algorithm>
#include <cctype>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "base/error.h"
#include "image/exif_orientation.h"
#include "image/format_decoders.h"
#include "image/pixel_convert.h"

namespace qvl {
namespace {

enum class PngLayout {
  kGray8,
  kGray16,
  kGrayAlpha8,
  kGrayAlpha16,
  kRgb8,
  kRgb16,
  kRgba8,
  kRgba16,
  kPalette
};

struct PngJob {
  std::span<const uint8_t> bytes;
  size_t offset = 0;
  const ImageLimits* limits = nullptr;
  const std::string* name = nullptr;
  RgbxImage* out = nullptr;
  std::vector<uint8_t>* scratch = nullptr;
  png_structp png = nullptr;
  png_infop info = nullptr;
  char message[256] = {};
  bool truncated = false;
  PngLayout layout = PngLayout::kRgb8;
  RgbxPalette palette{};
};

void ReadFromMemory(png_structp png, png_bytep dst, size_t count) {
  auto* job = static_cast<PngJob*>(png_get_io_ptr(png));
  if (job->bytes.size() - job->offset < count) {
    job->truncated = true;
    png_error(png, "unexpected end of data");
  }
  std::memcpy(dst, job->bytes.data() + job->offset, count);
  job->offset += count;
}

[[noreturn]] void OnPngError(png_structp png, png_const_charp message) {
  auto* job = static_cast<PngJob*>(png_get_error_ptr(png));
  std::snprintf(job->message, sizeof(job->message), "%s", message);
  png_longjmp(png, 1);
}

void OnPngWarning(png_structp, png_const_charp) {}

uint8_t High(const uint8_t* big_endian16) { return big_endian16[0]; }

void ConvertRow(const PngJob& job, const uint8_t* in, int width, uint8_t* out) {
  switch (job.layout) {
    case PngLayout::kGray8:
      GrayRowToRgbx(in, width, out);
      return;
    case PngLayout::kPalette:
      ExpandPaletteRow(in, width, job.palette, out);
      return;
    default:
      break;
  }
  for (int x = 0; x < width; ++x) {
    uint8_t* o = out + 4 * x;
    uint8_t r, g, b, a = 255;
    switch (job.layout) {
      case PngLayout::kGray16: {
        const uint8_t* p = in + 2 * x;
        r = g = b = p[0] != 0 ? 255 : p[1];
        break;
      }
      case PngLayout::kGrayAlpha8:
        r = g = b = in[2 * x];
        break;
      case PngLayout::kGrayAlpha16:
        r = g = b = High(in + 4 * x);
        a = High(in + 4 * x + 2);
        break;
      case PngLayout::kRgb8:
        r = in[3 * x], g = in[3 * x + 1], b = in[3 * x + 2];
        break;
      case PngLayout::kRgb16:
        r = High(in + 6 * x), g = High(in + 6 * x + 2), b = High(in + 6 * x + 4);
        break;
      case PngLayout::kRgba8:
        r = in[4 * x], g = in[4 * x + 1], b = in[4 * x + 2], a = in[4 * x + 3];
        break;
      case PngLayout::kRgba16:
        r = High(in + 8 * x), g = High(in + 8 * x + 2), b = High(in + 8 * x + 4);
        a = High(in + 8 * x + 6);
        break;
      default:
        r = g = b = 0;
        break;
    }
    if (a != 255) {
      r = CompositeOnWhite(r, a), g = CompositeOnWhite(g, a), b = CompositeOnWhite(b, a);
    }
    o[0] = r, o[1] = g, o[2] = b, o[3] = 255;
  }
}

PngLayout LayoutOf(int color_type, int bit_depth) {
  const bool wide = bit_depth == 16;
  switch (color_type) {
    case PNG_COLOR_TYPE_GRAY:
      return wide ? PngLayout::kGray16 : PngLayout::kGray8;
    case PNG_COLOR_TYPE_GRAY_ALPHA:
      return wide ? PngLayout::kGrayAlpha16 : PngLayout::kGrayAlpha8;
    case PNG_COLOR_TYPE_RGB:
      return wide ? PngLayout::kRgb16 : PngLayout::kRgb8;
    case PNG_COLOR_TYPE_RGB_ALPHA:
      return wide ? PngLayout::kRgba16 : PngLayout::kRgba8;
    default:
      return PngLayout::kPalette;
  }
}

// Header, transforms and pixels. False after a libpng error. May throw the size-limit
// errors (no libpng frame is active when it does).
bool ReadPngPixels(PngJob* job) {
  png_structp png = job->png;
  png_infop info = job->info;
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info);
  const png_uint_32 height = png_get_image_height(png, info);
  CheckDecodedSize(width, height, *job->limits, *job->name);
  const int color_type = png_get_color_type(png, info);
  const int bit_depth = png_get_bit_depth(png, info);
  job->layout = LayoutOf(color_type, bit_depth);
  if (color_type == PNG_COLOR_TYPE_PALETTE) {
    png_colorp entries = nullptr;
    int count = 0;
    png_get_PLTE(png, info, &entries, &count);
    job->palette =
        MakePalette(reinterpret_cast<const uint8_t*>(entries), count, sizeof(png_color), 0, 1, 2);
    if (bit_depth < 8) png_set_packing(png);
  } else if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) {
    png_set_expand_gray_1_2_4_to_8(png);
  }
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const size_t row_bytes = png_get_rowbytes(png, info);
  const int w = static_cast<int>(width), h = static_cast<int>(height);
  job->out->Reset(w, h);
  if (passes == 1) {
    job->scratch->resize(row_bytes);
    for (int y = 0; y < h; ++y) {
      png_read_row(png, job->scratch->data(), nullptr);
      ConvertRow(*job, job->scratch->data(), w, job->out->row(y));
    }
    return true;
  }
  // Interlaced: libpng fills in whole rows over several passes, so the image is
  // assembled in the file's own layout first.
  job->scratch->resize(row_bytes * h);
  for (int pass = 0; pass < passes; ++pass) {
    for (int y = 0; y < h; ++y) png_read_row(png, job->scratch->data() + row_bytes * y, nullptr);
  }
  for (int y = 0; y < h; ++y) {
    ConvertRow(*job, job->scratch->data() + row_bytes * y, w, job->out->row(y));
  }
  return true;
}

// Chunks after the image data (eXIf may sit there). Pillow ignores a damaged or
// missing tail once the pixels are complete, so errors here only end the reading.
bool ReadPngEnd(PngJob* job) {
  if (setjmp(png_jmpbuf(job->png))) return false;
  png_read_end(job->png, job->info);
  return true;
}

// Pillow's "Raw profile type exif" text: hex digits after the first three lines.
std::optional<int> OrientationFromRawProfile(std::string_view text) {
  for (int line = 0; line < 3; ++line) {
    const size_t newline = text.find('\n');
    if (newline == std::string_view::npos) return std::nullopt;
    text.remove_prefix(newline + 1);
  }
  std::vector<uint8_t> bytes;
  int high = -1;
  for (const char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    const int digit = std::isdigit(static_cast<unsigned char>(c))
                          ? c - '0'
                          : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    if (high < 0) {
      high = digit;
    } else {
      bytes.push_back(static_cast<uint8_t>(high << 4 | digit));
      high = -1;
    }
  }
  if (high >= 0) return std::nullopt;
  return ExifOrientation(bytes);
}

int PngOrientation(const PngJob& job) {
  png_bytep exif = nullptr;
  png_uint_32 exif_size = 0;
  if (png_get_eXIf_1(job.png, job.info, &exif_size, &exif) == 0) exif_size = 0;
  png_textp texts = nullptr;
  int text_count = 0;
  png_get_text(job.png, job.info, &texts, &text_count);
  std::string_view raw_profile, xmp;
  bool has_raw_profile = false, has_xmp = false;
  for (int i = 0; i < text_count; ++i) {
    const std::string_view key = texts[i].key;
    const std::string_view value = texts[i].text != nullptr ? texts[i].text : "";
    if (key == "Raw profile type exif") raw_profile = value, has_raw_profile = true;
    if (key == "XML:com.adobe.xmp") xmp = value, has_xmp = true;
  }
  std::optional<int> orientation;
  if (exif_size > 0) {
    orientation = ExifOrientation({exif, exif_size});
  } else if (has_raw_profile) {
    orientation = OrientationFromRawProfile(raw_profile);
  }
  if (!orientation && has_xmp) orientation = XmpOrientation(xmp);
  return orientation.value_or(1);
}

struct PngGuard {
  PngJob* job;
  ~PngGuard() { png_destroy_read_struct(&job->png, &job->info, nullptr); }
};

}  // namespace

int DecodePng(std::span<const uint8_t> bytes, const ImageLimits& limits, const std::string& name,
              RgbxImage* out, std::vector<uint8_t>* scratch) {
  PngJob job;
  job.bytes = bytes;
  job.limits = &limits;
  job.name = &name;
  job.out = out;
  job.scratch = scratch;
  job.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &job, OnPngError, OnPngWarning);
  if (job.png == nullptr) Fail(ErrorCode::kInternal, name, ": libpng could not start");
  PngGuard guard{&job};
  job.info = png_create_info_struct(job.png);
  if (job.info == nullptr) Fail(ErrorCode::kInternal, name, ": libpng could not start");
  png_set_read_fn(job.png, &job, ReadFromMemory);
  // Sizes are checked by CheckDecodedSize; libpng's own 1,000,000-pixel side limit would
  // reject valid long images with a less helpful message.
  png_set_user_limits(job.png, 0x7fffffff, 0x7fffffff);
  png_set_chunk_malloc_max(job.png, 8 << 20);
  png_set_chunk_cache_max(job.png, 1000);
  png_set_benign_errors(job.png, 1);
  if (!ReadPngPixels(&job)) {
    if (job.truncated) FailTruncated(name, "PNG");
    FailCorrupt(name, "PNG", job.message);
  }
  ReadPngEnd(&job);
  return PngOrientation(job);
}

}  // namespace qvl
