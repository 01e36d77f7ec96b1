// How many pixels (and so video tokens) one video may become. Unlike an image's, a
// video's budget covers all its sampled frames (T x H x W, as the `size` of
// video_preprocessor_config.json); qwen-vl-utils' per-video keys bound each frame
// instead, and become clip bounds once sampling has fixed the frame count. Bounds in
// tokens are what the video costs in the prompt: its vision tokens and the text around
// them (a timestamp and two vision markers per frame pair), so that a budget sized to
// fit the context does.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "image/image_budget.h"
#include "image/preprocessor_config.h"

namespace qvl {

// Pixels over all sampled frames covered by one video token after merging:
// temporal_patch_size * (patch_size * merge_size)^2, i.e. 2 x 32 x 32 = 2048 for
// Qwen3-VL (a frame pair of 32 x 32 pixels).
int64_t PixelsPerVideoToken(const ImageProcessorParams& params);

struct VideoBudget {
  // What the request asks; 0 = nothing. Pixel bounds are the reference's (the frames'
  // pixels alone): clip bounds over all sampled frames, frame bounds per frame.
  int64_t min_pixels = 0;
  int64_t max_pixels = 0;
  int64_t min_frame_pixels = 0;
  int64_t max_frame_pixels = 0;
  // Token bounds cover the video's whole cost in the prompt.
  int64_t min_tokens = 0;
  int64_t max_tokens = 0;
  // The server's, in tokens of the whole cost: the bounds of a request that asks none,
  // and the most a request's own bounds may reach. 0 = the model's range.
  int64_t default_min_tokens = 0;
  int64_t default_max_tokens = 0;
  int64_t limit_tokens = 0;
  // The prompt tokens of the text around the frame pairs shown at these times (one per
  // pair); unset, the text costs nothing.
  std::function<int64_t(std::span<const double> pair_seconds)> text_tokens = nullptr;
};

// The bound in tokens ClipBudget holds a clip to: the request's within the limit, the
// limit when the request bounds pixels instead, else the server's default. 0 = none.
int64_t MaxVideoTokens(const VideoBudget& budget);

// The fewest video tokens of a frame pair worth sampling more frames for: qwen-vl-utils'
// least pixels of a video frame (VIDEO_MIN_PIXELS, 128 tokens of a frame; pairs of
// frames that size are 128 of ours). A clip sampled at its default rate whose pairs
// would get fewer within its budget samples fewer frames instead (see
// PreprocessVideo), so that each keeps a legible size.
inline constexpr int64_t kLeastTokensPerFramePair = 128;

// A clip once sampling has fixed its frames.
struct ClipShape {
  int64_t frames = 0;  // sampled
  int temporal_patch_size = 2;
  int64_t pixels_per_token = 0;  // PixelsPerVideoToken
  int64_t text_tokens = 0;       // budget.text_tokens of its pairs
};

// The pixel bounds over all sampled frames of `clip`. A token bound leaves the frames
// what the text does not take. A frame bound counts for the frames as smart_resize
// rounds them to whole temporal patches, so that a frame of the resized clip meets it
// exactly as qwen-vl-utils' per-frame resize would (for an even frame count; an odd one
// rounds to the nearer even count). Where several maxima are given the tightest holds.
// As for images (ImageBudgetFor): the request's maximum is capped at limit_tokens, and
// its minimum wins over a lower maximum as far as limit_tokens allows. Throws
// Error(kInvalidArgument) for negative values, and naming `name` when the maximum in
// tokens cannot hold the text and one token per frame pair.
ImageBudget ClipBudget(const VideoBudget& budget, const ClipShape& clip, const std::string& name);

}  // namespace qvl
