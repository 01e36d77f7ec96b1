// How many pixels (and so video tokens) one video may become. Unlike an image's, a
// video's budget covers all its sampled frames (T x H x W, as the `size` of
// video_preprocessor_config.json); qwen-vl-utils' per-video keys bound each frame
// instead, and become clip bounds once sampling has fixed the frame count.
#pragma once

#include <cstdint>

#include "image/image_budget.h"
#include "image/preprocessor_config.h"

namespace qvl {

// Pixels over all sampled frames covered by one video token after merging:
// temporal_patch_size * (patch_size * merge_size)^2, i.e. 2 x 32 x 32 = 2048 for
// Qwen3-VL (a frame pair of 32 x 32 pixels).
int64_t PixelsPerVideoToken(const ImageProcessorParams& params);

struct VideoBudget {
  // What the request asks; 0 = nothing. Clip bounds are over all sampled frames, frame
  // bounds per frame.
  int64_t min_pixels = 0;
  int64_t max_pixels = 0;
  int64_t min_frame_pixels = 0;
  int64_t max_frame_pixels = 0;
  // The server's: the bounds of a request that asks none, and the most a request's own
  // bounds may reach. 0 = the model's range.
  int64_t default_min_pixels = 0;
  int64_t default_max_pixels = 0;
  int64_t limit_pixels = 0;
};

// The clip bounds for `frames` sampled frames. A frame bound counts for the frames as
// smart_resize rounds them to whole temporal patches, so that a frame of the resized
// clip meets it exactly as qwen-vl-utils' per-frame resize would (for an even frame
// count; an odd one rounds to the nearer even count). Where a clip and a frame bound
// are both given the tighter holds. As for images (ImageBudgetFor): the request's
// maximum is capped at limit_pixels, and its minimum wins over a lower maximum as far
// as limit_pixels allows. Throws Error(kInvalidArgument) for negative values.
ImageBudget ClipBudget(const VideoBudget& budget, int64_t frames, int temporal_patch_size);

}  // namespace qvl
