// BMP, parsed here (no library needed), following Pillow's BmpImagePlugin:
// - headers of 12 (OS/2 core) and 40/52/56/64/108/124 bytes (Windows v3-v5);
// - 1/4/8-bit palette images; a palette that is the grey ramp means mode L (grey =
//   index), otherwise entries past the palette are black;
// - 16-bit 5-5-5 (and 5-6-5 with BITFIELDS), scaled as c * 255 / 31 (or / 63);
// - 24-bit BGR; 32-bit BGRX (the fourth byte ignored, as Pillow does without
//   BITFIELDS), or with BITFIELDS one of Pillow's byte layouts, alpha composited;
// - bottom-up rows, or top-down when the height is negative.
// RLE4/RLE8 and embedded JPEG/PNG are refused with a clear message.
#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "image/format_decoders.h"
#include "image/pixel_convert.h"

namespace qvl {
namespace {

uint32_t U16(const uint8_t* p) { return p[0] | p[1] << 8; }
uint32_t U32(const uint8_t* p) {
  return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24;
}

constexpr uint32_t kRaw = 0, kRle8 = 1, kRle4 = 2, kBitfields = 3;

// Byte offsets of R, G, B and A (-1: none) inside a 32-bit pixel.
struct ByteLayout {
  int r, g, b, a;
};

// Pillow's accepted 32-bit masks (R, G, B, A).
struct MaskLayout {
  uint32_t r, g, b, a;
  ByteLayout layout;
};
constexpr MaskLayout kMasks32[] = {
    {0xFF0000, 0xFF00, 0xFF, 0x0, {2, 1, 0, -1}},        // BGRX
    {0xFF000000, 0xFF0000, 0xFF00, 0x0, {3, 2, 1, -1}},  // XBGR
    {0xFF000000, 0xFF00, 0xFF, 0x0, {3, 1, 0, -1}},      // BGXR
    {0xFF000000, 0xFF0000, 0xFF00, 0xFF, {3, 2, 1, 0}},  // ABGR
    {0xFF, 0xFF00, 0xFF0000, 0xFF000000, {0, 1, 2, 3}},  // RGBA
    {0xFF0000, 0xFF00, 0xFF, 0xFF000000, {2, 1, 0, 3}},  // BGRA
    {0xFF000000, 0xFF00, 0xFF, 0xFF0000, {3, 1, 0, 2}},  // BGAR
    {0x0, 0x0, 0x0, 0x0, {2, 1, 0, 3}},                  // BGRA
};

struct BmpHeader {
  int64_t width = 0;
  int64_t height = 0;
  bool top_down = false;
  int bits = 0;
  uint32_t compression = kRaw;
  int64_t colors = 0;
  int palette_entry_bytes = 4;
  size_t palette_offset = 0;
  size_t pixel_offset = 0;
  uint32_t masks[4] = {0, 0, 0, 0};
};

BmpHeader ParseHeader(std::span<const uint8_t> bytes, const std::string& name) {
  if (bytes.size() < 18) FailTruncated(name, "BMP");
  BmpHeader h;
  h.pixel_offset = U32(&bytes[10]);
  const uint32_t header_size = U32(&bytes[14]);
  if (bytes.size() < 14 + static_cast<size_t>(header_size)) FailTruncated(name, "BMP");
  const uint8_t* d = &bytes[18];  // header fields after the size
  if (header_size == 12) {
    h.width = U16(d);
    h.height = U16(d + 2);
    h.bits = static_cast<int>(U16(d + 6));
    h.palette_entry_bytes = 3;
  } else if (header_size == 40 || header_size == 52 || header_size == 56 || header_size == 64 ||
             header_size == 108 || header_size == 124) {
    h.width = U32(d);
    h.top_down = d[7] == 0xFF;
    h.height = h.top_down ? (int64_t{1} << 32) - U32(d + 4) : U32(d + 4);
    h.bits = static_cast<int>(U16(d + 10));
    h.compression = U32(d + 12);
    h.colors = U32(d + 28);
    if (h.compression == kBitfields) {
      // 40-byte headers keep the masks right after the header, where larger headers
      // have them as fields: the same file offsets either way.
      if (bytes.size() < 14 + 52) FailTruncated(name, "BMP");
      for (int i = 0; i < 3; ++i) h.masks[i] = U32(&bytes[54 + 4 * i]);
      if (header_size >= 56) h.masks[3] = U32(&bytes[66]);
    }
  } else {
    FailCorrupt(name, "BMP", StrCat("unsupported header size ", header_size));
  }
  if (h.colors == 0) h.colors = int64_t{1} << std::min(h.bits, 32);
  h.palette_offset = 14 + header_size;
  if (h.pixel_offset == h.palette_offset && h.bits <= 8) {
    h.pixel_offset += h.palette_entry_bytes * h.colors;
  }
  return h;
}

// Pixels of one row as RGBX.
struct RowFormat {
  int bits;
  bool rgb555;
  ByteLayout layout;  // 32-bit pixels
  const RgbxPalette* palette;
};

void UnpackRow(const RowFormat& f, const uint8_t* in, int width, uint8_t* out) {
  if (f.bits <= 8) {
    for (int x = 0; x < width; ++x) {
      const int bit = x * f.bits;
      const int index = (in[bit >> 3] >> (8 - f.bits - (bit & 7))) & ((1 << f.bits) - 1);
      std::memcpy(out + 4 * x, &(*f.palette)[4 * index], 4);
    }
    return;
  }
  for (int x = 0; x < width; ++x) {
    uint8_t* o = out + 4 * x;
    if (f.bits == 16) {
      const uint32_t p = U16(in + 2 * x);
      o[2] = static_cast<uint8_t>((p & 31) * 255 / 31);
      if (f.rgb555) {
        o[1] = static_cast<uint8_t>(((p >> 5) & 31) * 255 / 31);
        o[0] = static_cast<uint8_t>(((p >> 10) & 31) * 255 / 31);
      } else {
        o[1] = static_cast<uint8_t>(((p >> 5) & 63) * 255 / 63);
        o[0] = static_cast<uint8_t>(((p >> 11) & 31) * 255 / 31);
      }
      o[3] = 255;
    } else if (f.bits == 24) {
      const uint8_t* p = in + 3 * x;
      o[0] = p[2], o[1] = p[1], o[2] = p[0], o[3] = 255;
    } else {
      const uint8_t* p = in + 4 * x;
      const uint32_t a = f.layout.a >= 0 ? p[f.layout.a] : 255;
      o[0] = CompositeOnWhite(p[f.layout.r], a);
      o[1] = CompositeOnWhite(p[f.layout.g], a);
      o[2] = CompositeOnWhite(p[f.layout.b], a);
      o[3] = 255;
    }
  }
}

RowFormat ChooseFormat(const BmpHeader& h, const std::string& name) {
  RowFormat f{h.bits, true, {2, 1, 0, -1}, nullptr};
  if (h.bits != 1 && h.bits != 4 && h.bits != 8 && h.bits != 16 && h.bits != 24 && h.bits != 32) {
    FailCorrupt(name, "BMP", StrCat("unsupported pixel depth ", h.bits));
  }
  if (h.compression == kRle4 || h.compression == kRle8) {
    FailCorrupt(name, "BMP", "RLE compression is not supported; send PNG or JPEG");
  }
  if (h.compression != kRaw && h.compression != kBitfields) {
    FailCorrupt(name, "BMP", StrCat("unsupported compression ", h.compression));
  }
  if (h.compression != kBitfields) return f;
  const uint32_t* m = h.masks;
  if (h.bits == 32) {
    for (const MaskLayout& l : kMasks32) {
      if (m[0] == l.r && m[1] == l.g && m[2] == l.b && m[3] == l.a) {
        f.layout = l.layout;
        return f;
      }
    }
  } else if (h.bits == 24 && m[0] == 0xFF0000 && m[1] == 0xFF00 && m[2] == 0xFF) {
    return f;
  } else if (h.bits == 16 && m[0] == 0xF800 && m[1] == 0x7E0 && m[2] == 0x1F) {
    f.rgb555 = false;
    return f;
  } else if (h.bits == 16 && m[0] == 0x7C00 && m[1] == 0x3E0 && m[2] == 0x1F) {
    return f;
  }
  FailCorrupt(name, "BMP", "unsupported bitfields layout");
}

RgbxPalette ReadPalette(std::span<const uint8_t> bytes, const BmpHeader& h,
                        const std::string& name) {
  if (h.colors <= 0 || h.colors > 65536) {
    FailCorrupt(name, "BMP", StrCat("unsupported palette size ", h.colors));
  }
  const int count = static_cast<int>(std::min<int64_t>(h.colors, 256));
  const size_t palette_bytes = static_cast<size_t>(count) * h.palette_entry_bytes;
  if (h.palette_offset > bytes.size() || bytes.size() - h.palette_offset < palette_bytes) {
    FailTruncated(name, "BMP");
  }
  const uint8_t* entries = bytes.data() + h.palette_offset;
  // Pillow drops a grey-ramp palette (entry i == (i, i, i); two colours: black, white)
  // and reads the indices as grey levels.
  bool grey = true;
  for (int i = 0; i < count && grey; ++i) {
    const int level = h.colors == 2 ? (i == 0 ? 0 : 255) : i;
    const uint8_t* e = entries + static_cast<size_t>(i) * h.palette_entry_bytes;
    grey = e[0] == level && e[1] == level && e[2] == level;
  }
  if (grey && h.colors != 2) {
    RgbxPalette ramp;
    for (int i = 0; i < 256; ++i) {
      ramp[4 * i] = ramp[4 * i + 1] = ramp[4 * i + 2] = static_cast<uint8_t>(i);
      ramp[4 * i + 3] = 255;
    }
    return ramp;
  }
  return MakePalette(entries, count, h.palette_entry_bytes, 2, 1, 0);
}

}  // namespace

int DecodeBmp(std::span<const uint8_t> bytes, const ImageLimits& limits, const std::string& name,
              RgbxImage* out) {
  const BmpHeader h = ParseHeader(bytes, name);
  CheckDecodedSize(h.width, h.height, limits, name);
  RowFormat format = ChooseFormat(h, name);
  RgbxPalette palette;
  if (h.bits <= 8) {
    palette = ReadPalette(bytes, h, name);
    format.palette = &palette;
  }
  const size_t stride = ((static_cast<size_t>(h.width) * h.bits + 31) >> 3) & ~size_t{3};
  const size_t needed = stride * static_cast<size_t>(h.height);
  if (h.pixel_offset > bytes.size() || bytes.size() - h.pixel_offset < needed) {
    FailTruncated(name, "BMP");
  }
  const int width = static_cast<int>(h.width), height = static_cast<int>(h.height);
  out->Reset(width, height);
  for (int y = 0; y < height; ++y) {
    const int file_row = h.top_down ? y : height - 1 - y;
    UnpackRow(format, bytes.data() + h.pixel_offset + stride * file_row, width, out->row(y));
  }
  return 1;
}

}  // namespace qvl
