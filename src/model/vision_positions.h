// Position information of the vision tower, per patch in the 2x2-block patch order of
// pixel_values (fixtures README 4.4): the interpolated learned position embedding and the
// 2-D rotary angles. Mirrors Qwen3VLVisionModel.fast_pos_embed_interpolate and rot_pos_emb.
#pragma once

#include <span>
#include <vector>

#include "model/image_grid.h"
#include "ops/weight_view.h"

namespace qvl {

// Bilinear interpolation of the G x G table (G*G rows of `dim`) onto each image's
// (h, w) patch raster with linspace(0, G-1, n) coordinates, permuted to block order and
// repeated over t. Writes [sum of patches, dim] into out.
void InterpolatePositionEmbedding(const WeightView& table, std::span<const GridThw> grids,
                                  int merge, float* out);

// cos/sin of the 2-D rotary angles, [sum of patches, head_dim/2] each: for a patch at
// patch row r and column c, angles = [r * f_0 .. r * f_{d/4-1}, c * f_0 .. c * f_{d/4-1}],
// f_j = 10000^(-2j / (d/2)).
void VisionRotaryTables(std::span<const GridThw> grids, int merge, int head_dim,
                        std::vector<float>* cos, std::vector<float>* sin);

}  // namespace qvl
