#include "image/exif_orientation.h"

#include <algorithm>
#include <cstring>

namespace qvl {
namespace {

constexpr uint16_t kOrientationTag = 0x0112;

class TiffReader {
 public:
  TiffReader(std::span<const uint8_t> data, bool little_endian)
      : data_(data), little_endian_(little_endian) {}

  bool Has(size_t offset, size_t bytes) const {
    return offset <= data_.size() && bytes <= data_.size() - offset;
  }
  uint32_t U8(size_t offset) const { return data_[offset]; }
  uint32_t U16(size_t offset) const {
    const uint32_t a = data_[offset], b = data_[offset + 1];
    return little_endian_ ? (a | b << 8) : (a << 8 | b);
  }
  uint32_t U32(size_t offset) const {
    const uint32_t lo = U16(offset), hi = U16(offset + 2);
    return little_endian_ ? (lo | hi << 16) : (lo << 16 | hi);
  }

 private:
  std::span<const uint8_t> data_;
  bool little_endian_;
};

// The integer in a count-1 IFD entry whose value sits inline at `offset`.
std::optional<int> InlineInteger(const TiffReader& tiff, uint32_t type, size_t offset) {
  switch (type) {
    case 1:  // BYTE
      return static_cast<int>(tiff.U8(offset));
    case 3:  // SHORT
      return static_cast<int>(tiff.U16(offset));
    case 4:  // LONG
      return static_cast<int>(std::min<uint32_t>(tiff.U32(offset), 0x7fffffff));
    case 6:  // SBYTE
      return static_cast<int>(static_cast<int8_t>(tiff.U8(offset)));
    case 8:  // SSHORT
      return static_cast<int>(static_cast<int16_t>(tiff.U16(offset)));
    case 9:  // SLONG
      return static_cast<int>(static_cast<int32_t>(tiff.U32(offset)));
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<int> ExifOrientation(std::span<const uint8_t> exif) {
  static constexpr uint8_t kExifPrefix[6] = {'E', 'x', 'i', 'f', 0, 0};
  while (exif.size() >= 6 && std::memcmp(exif.data(), kExifPrefix, 6) == 0) {
    exif = exif.subspan(6);
  }
  if (exif.size() < 8) return std::nullopt;
  bool little_endian;
  if (exif[0] == 'I' && exif[1] == 'I' && exif[2] == 42 && exif[3] == 0) {
    little_endian = true;
  } else if (exif[0] == 'M' && exif[1] == 'M' && exif[2] == 0 && exif[3] == 42) {
    little_endian = false;
  } else {
    return std::nullopt;
  }
  const TiffReader tiff(exif, little_endian);
  const size_t ifd = tiff.U32(4);
  if (!tiff.Has(ifd, 2)) return std::nullopt;
  const uint32_t entries = tiff.U16(ifd);
  std::optional<int> orientation;
  // Later duplicates win, as in Pillow's tag dictionary; a truncated entry list keeps
  // what was read before the cut.
  for (uint32_t i = 0; i < entries; ++i) {
    const size_t entry = ifd + 2 + 12 * static_cast<size_t>(i);
    if (!tiff.Has(entry, 12)) break;
    if (tiff.U16(entry) != kOrientationTag) continue;
    const uint32_t count = tiff.U32(entry + 4);
    std::optional<int> value;
    if (count == 1) value = InlineInteger(tiff, tiff.U16(entry + 2), entry + 8);
    orientation = value.value_or(1);
  }
  return orientation;
}

std::optional<int> XmpOrientation(std::string_view xmp) {
  static constexpr std::string_view kKey = "tiff:Orientation";
  for (size_t at = xmp.find(kKey); at != std::string_view::npos; at = xmp.find(kKey, at + 1)) {
    std::string_view rest = xmp.substr(at + kKey.size());
    if (rest.starts_with("=\"")) {
      rest.remove_prefix(2);
    } else if (rest.starts_with(">")) {
      rest.remove_prefix(1);
    } else {
      continue;
    }
    if (!rest.empty() && rest[0] >= '0' && rest[0] <= '9') return rest[0] - '0';
  }
  return std::nullopt;
}

void ApplyOrientation(const RgbxImage& in, int orientation, RgbxImage* out) {
  const int w = in.width(), h = in.height();
  const bool swaps = orientation >= 5;
  out->Reset(swaps ? h : w, swaps ? w : h);
  const int ow = out->width(), oh = out->height();
  // Source pixel of output (x, y) is in(sx0 + x*dxx + y*dxy, sy0 + x*dyx + y*dyy).
  int sx0 = 0, sy0 = 0, dxx = 1, dxy = 0, dyx = 0, dyy = 1;
  switch (orientation) {
    case 2:  // FLIP_LEFT_RIGHT
      sx0 = w - 1, dxx = -1;
      break;
    case 3:  // ROTATE_180
      sx0 = w - 1, dxx = -1, sy0 = h - 1, dyy = -1;
      break;
    case 4:  // FLIP_TOP_BOTTOM
      sy0 = h - 1, dyy = -1;
      break;
    case 5:  // TRANSPOSE
      dxx = 0, dxy = 1, dyx = 1, dyy = 0;
      break;
    case 6:  // ROTATE_270 (90 degrees clockwise)
      dxx = 0, dxy = 1, sy0 = h - 1, dyx = -1, dyy = 0;
      break;
    case 7:  // TRANSVERSE
      sx0 = w - 1, dxx = 0, dxy = -1, sy0 = h - 1, dyx = -1, dyy = 0;
      break;
    case 8:  // ROTATE_90 (90 degrees counter-clockwise)
      sx0 = w - 1, dxx = 0, dxy = -1, dyx = 1, dyy = 0;
      break;
  }
  const uint8_t* src = in.data();
  uint8_t* dst = out->data();
  // Tiles keep both the reads and the writes of a transposing turn inside the cache.
  constexpr int kTile = 32;
  for (int ty = 0; ty < oh; ty += kTile) {
    for (int tx = 0; tx < ow; tx += kTile) {
      const int y_end = std::min(oh, ty + kTile), x_end = std::min(ow, tx + kTile);
      for (int y = ty; y < y_end; ++y) {
        uint8_t* d = dst + static_cast<size_t>(y) * ow * 4;
        for (int x = tx; x < x_end; ++x) {
          const int sx = sx0 + x * dxx + y * dxy;
          const int sy = sy0 + x * dyx + y * dyy;
          std::memcpy(d + 4 * x, src + (static_cast<size_t>(sy) * w + sx) * 4, 4);
        }
      }
    }
  }
}

}  // namespace qvl
