// Normalisation and patch flattening (fixtures README 4.4): the resized RGB image
// becomes pixel_values [num_patches, 3 * temporal_patch_size * patch_size^2] in
// Qwen2-VL's order, bit-exact to transformers' float32 arithmetic.
#pragma once

#include <array>

#include "image/preprocessor_config.h"
#include "image/rgbx_image.h"

namespace qvl {

// How a byte value u of channel c becomes a float. transformers rescales in float64 and
// casts to float32, then normalises in float32:
//   v = float(u * rescale_factor)   (or float(u) without rescaling)
//   value = (v - mean[c]) / std[c]  (skipped without normalisation)
// The scalar kernel looks the 3 x 256 results up in `table`; the AVX2 kernel computes
// the same IEEE operations lane by lane (a gather is slower), so both are bit-exact.
struct NormalizationTable {
  bool rescale = true;
  double rescale_factor = 1.0 / 255.0;
  bool normalize = true;
  std::array<float, 3> mean = {0, 0, 0};
  std::array<float, 3> std = {1, 1, 1};
  std::array<std::array<float, 256>, 3> table;
};

NormalizationTable MakeNormalizationTable(const ImageProcessorParams& params);

// Patch geometry.
struct PatchLayout {
  int patch_size = 16;
  int temporal_patch_size = 2;
  int merge_size = 2;
};

// Writes the patch rows of `image` to `out`. Rows walk merge_size x merge_size blocks
// in raster order and the patches of a block in raster order; inside a row the values
// are ordered (channel, frame, y, x), and the temporal frames are copies of the image.
// Requires both sides to be multiples of patch_size * merge_size; `out` must hold
// (width / patch) * (height / patch) * 3 * temporal * patch^2 floats. Uses AVX2 when
// qvl::ActiveTier() allows and patch_size is a multiple of 8.
void Patchify(const RgbxImage& image, const NormalizationTable& table, const PatchLayout& layout,
              float* out);

// The same for one temporal group of a video: frame f of every patch row comes from
// frames[f], f < layout.temporal_patch_size (all of one size; a frame may repeat, as the
// last one of an odd count does).
void PatchifyFrames(const RgbxImage* const* frames, const NormalizationTable& table,
                    const PatchLayout& layout, float* out);

}  // namespace qvl
