// Conversions of decoded pixels to RGBX with exactly the arithmetic Pillow uses, so
// qvl's pixels match the reference pipeline (PIL convert("RGB") / paste onto white).
#pragma once

#include <array>
#include <cstdint>

namespace qvl {

// Pillow's paste(rgba, mask=alpha) onto opaque white, per channel:
// round((c * a + 255 * (255 - a)) / 255) computed with its DIV255 integer trick.
inline uint8_t CompositeOnWhite(uint32_t c, uint32_t a) {
  const uint32_t x = c * a + 255 * (255 - a) + 128;
  return static_cast<uint8_t>((x + (x >> 8)) >> 8);
}

// Pillow's CMYK -> RGB for one channel. JPEG CMYK is stored inverted (Adobe convention);
// Pillow un-inverts it ("CMYK;I"), so `stored_c` and `stored_k` are the raw samples
// libjpeg returns. With c = 255 - stored_c, nk = 255 - k = stored_k:
// out = clip(nk - round(c * nk / 255)).
inline uint8_t InvertedCmykToRgb(uint32_t stored_c, uint32_t stored_k) {
  const int nk = static_cast<int>(stored_k);
  const int tmp = static_cast<int>(255 - stored_c) * nk + 128;
  const int v = nk - ((tmp + (tmp >> 8)) >> 8);
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

// In-place row conversions; `pixels` holds `count` 4-byte pixels.
// RGBA -> RGB composited onto white (the reference treats PIL mode RGBA this way).
void CompositeRowOnWhite(uint8_t* pixels, int count);
// Inverted CMYK (as libjpeg returns Adobe JPEGs) -> RGB.
void InvertedCmykRowToRgbx(uint8_t* pixels, int count);

// A palette of 256 RGBX entries. Entries the file does not define are black, as in
// Pillow, whose palettes start zero-filled.
using RgbxPalette = std::array<uint8_t, 256 * 4>;

// Builds a palette from `count` packed entries of `entry_bytes` bytes each, with the red,
// green and blue bytes at offsets r, g, b inside an entry (RGB for PNG/GIF, BGR(X) for
// BMP). Extra entries beyond 256 are ignored.
RgbxPalette MakePalette(const uint8_t* entries, int count, int entry_bytes, int r, int g, int b);

// The two expansions below run back to front, so the input may sit at the start of
// `out` (in-place expansion of a decoded row).
// Looks up `count` 8-bit indices into 4-byte pixels.
void ExpandPaletteRow(const uint8_t* indices, int count, const RgbxPalette& palette, uint8_t* out);

// Grey levels -> R = G = B.
void GrayRowToRgbx(const uint8_t* gray, int count, uint8_t* out);

}  // namespace qvl
