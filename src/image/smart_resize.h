// Qwen2-VL/Qwen3-VL's smart_resize: the size an image is resampled to before it is cut
// into patches. Both sides become multiples of `factor` (patch_size * merge_size = 32),
// close to the original aspect ratio, with the area inside [min_pixels, max_pixels].
#pragma once

#include <cstdint>
#include <string>

#include "image/image_size.h"

namespace qvl {

// The longest side over the shortest that smart_resize takes (transformers' MAX_RATIO).
inline constexpr int kMaxAspectRatio = 200;

// transformers' smart_resize, in double precision like the Python original:
//   h = round(H / factor) * factor, w likewise (round half to even, as Python's round);
//   if h * w > max_pixels: beta = sqrt(H * W / max_pixels),
//     h = max(factor, floor(H / beta / factor) * factor), w likewise;
//   else if h * w < min_pixels: beta = sqrt(min_pixels / (H * W)),
//     h = ceil(H * beta / factor) * factor, w likewise.
// Throws Error(kInvalidArgument) naming the image when a side is shorter than `factor`
// or the aspect ratio is over kMaxAspectRatio:1, and Error(kTooLarge) if the result does not fit
// an int. Requires factor >= 1 and 1 <= min_pixels <= max_pixels.
ImageSize SmartResize(ImageSize size, int factor, int64_t min_pixels, int64_t max_pixels,
                      const std::string& name);

// The video processor's smart_resize (fixtures README 7.3): the pixel bounds cover all
// `frames` frames of a clip, rounded to a multiple of `temporal_factor`:
//   t = round(frames / temporal_factor) * temporal_factor, and t * h * w (instead of
//   h * w) is compared with the bounds, frames * H * W (instead of H * W) gives beta.
// Throws Error(kInvalidArgument) for fewer than `temporal_factor` frames and as
// SmartResize for the frame size.
ImageSize SmartResizeVideo(ImageSize size, int64_t frames, int temporal_factor, int factor,
                           int64_t min_pixels, int64_t max_pixels, const std::string& name);

// The t above: the frame count SmartResizeVideo compares its bounds with.
int64_t SmartResizeFrameCount(int64_t frames, int temporal_factor);

}  // namespace qvl
