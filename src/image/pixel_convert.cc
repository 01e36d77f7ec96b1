#include "image/pixel_convert.h"

#include <cstring>

namespace qvl {

void CompositeRowOnWhite(uint8_t* pixels, int count) {
  for (int i = 0; i < count; ++i) {
    uint8_t* p = pixels + 4 * i;
    const uint32_t a = p[3];
    if (a != 255) {
      p[0] = CompositeOnWhite(p[0], a);
      p[1] = CompositeOnWhite(p[1], a);
      p[2] = CompositeOnWhite(p[2], a);
      p[3] = 255;
    }
  }
}

void InvertedCmykRowToRgbx(uint8_t* pixels, int count) {
  for (int i = 0; i < count; ++i) {
    uint8_t* p = pixels + 4 * i;
    const uint32_t k = p[3];
    p[0] = InvertedCmykToRgb(p[0], k);
    p[1] = InvertedCmykToRgb(p[1], k);
    p[2] = InvertedCmykToRgb(p[2], k);
    p[3] = 255;
  }
}

RgbxPalette MakePalette(const uint8_t* entries, int count, int entry_bytes, int r, int g, int b) {
  RgbxPalette palette;
  palette.fill(0);
  if (count > 256) count = 256;
  for (int i = 0; i < 256; ++i) palette[4 * i + 3] = 255;
  for (int i = 0; i < count; ++i) {
    const uint8_t* e = entries + static_cast<size_t>(i) * entry_bytes;
    palette[4 * i + 0] = e[r];
    palette[4 * i + 1] = e[g];
    palette[4 * i + 2] = e[b];
  }
  return palette;
}

void ExpandPaletteRow(const uint8_t* indices, int count, const RgbxPalette& palette, uint8_t* out) {
  for (int i = count - 1; i >= 0; --i) std::memcpy(out + 4 * i, &palette[4 * indices[i]], 4);
}

void GrayRowToRgbx(const uint8_t* gray, int count, uint8_t* out) {
  for (int i = count - 1; i >= 0; --i) {
    const uint8_t v = gray[i];
    out[4 * i + 0] = out[4 * i + 1] = out[4 * i + 2] = v;
    out[4 * i + 3] = 255;
  }
}

}  // namespace qvl
