// EXIF orientation: which way up a photo was taken. Read the way Pillow's
// Image.getexif() does and applied like ImageOps.exif_transpose, before resizing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "image/rgbx_image.h"

namespace qvl {

// The Orientation tag (0x0112) of IFD0 in an EXIF block: a TIFF structure, optionally
// preceded by "Exif\0\0" (as in JPEG APP1 and some WebP files). nullopt when the block
// has no such tag or is not TIFF. A tag that is present but not a single integer gives 1
// (no change), as it does in Pillow.
std::optional<int> ExifOrientation(std::span<const uint8_t> exif);

// Pillow's fallback when EXIF has no Orientation tag: the first match of
// tiff:Orientation="D" or tiff:Orientation>D in XMP text (D one digit).
std::optional<int> XmpOrientation(std::string_view xmp);

// True for orientations that change the pixels (2..8); other values leave them as stored.
inline bool OrientationTransforms(int orientation) { return orientation >= 2 && orientation <= 8; }

// Writes `in` turned upright into `out` (which must be a different image):
// 2 mirror left-right, 3 rotate 180, 4 mirror top-bottom, 5 transpose,
// 6 rotate 90 clockwise, 7 transverse, 8 rotate 90 counter-clockwise.
// Orientations 5-8 swap width and height. Requires OrientationTransforms(orientation).
void ApplyOrientation(const RgbxImage& in, int orientation, RgbxImage* out);

}  // namespace qvl
