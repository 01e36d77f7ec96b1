// The video pipeline: the frames of a clip -> pixel_values_videos for the vision tower,
// as transformers' Qwen3VLVideoProcessor computes it (fixtures README 7.2-7.4): frames
// sampled at 2 fps, one smart_resize for the whole clip, the image path's PIL-exact
// bicubic resampling, (u8 - 127.5) / 127.5, and patch rows of temporal groups of two
// frames (the last frame repeated for an odd count).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "image/image_budget.h"
#include "image/image_size.h"
#include "image/preprocessor_config.h"
#include "image/rgbx_image.h"
#include "image/video_budget.h"
#include "image/video_limits.h"
#include "image/video_sampling.h"

namespace qvl {

// video_preprocessor_config.json: the image processor's fields (its `size` is the pixel
// budget over all sampled frames) and the frame sampling.
struct VideoProcessorParams {
  ImageProcessorParams image;
  FrameSampling sampling;
};

// Parses video_preprocessor_config.json text: the fields of ParsePreprocessorConfig plus
// `fps`, `min_frames` and `max_frames`. Throws Error(kCorrupt) naming `source` and the
// field.
VideoProcessorParams ParseVideoPreprocessorConfig(std::string_view json_text,
                                                  const std::string& source);
VideoProcessorParams LoadVideoPreprocessorConfig(const std::string& path);

// Where a model folder keeps its video_preprocessor_config.json.
std::string VideoPreprocessorConfigPath(const std::string& model_dir);

// The video settings of a model folder: its video_preprocessor_config.json, or when it
// has none the image settings with the default frame sampling.
VideoProcessorParams VideoParamsOfFolder(const std::string& model_dir,
                                         const ImageProcessorParams& image);

// The frames of a clip, read in increasing index order (a decoder may run forwards
// only). Every frame has one size.
class VideoFrameSource {
 public:
  virtual ~VideoFrameSource() = default;
  // What the source holds as far as it knows: a file learns that its stream ends early
  // only by decoding it (see ReadFrame).
  virtual int64_t frame_count() const = 0;
  virtual double fps() const = 0;
  // Writes frame `index` (greater than any index read before, under frame_count()) as RGB
  // into `out` and returns its index. A file whose frame `index` does not decode gives
  // the next one that does (a larger index, or one given before); one whose stream
  // ends before `index` gives its last frame (a smaller index) and from then on counts
  // the frames up to it. Throws Error naming the frame for a broken or oversized one.
  virtual int64_t ReadFrame(int64_t index, RgbxImage* out) = 0;
};

struct PreprocessedVideo {
  // [num_patches, params.patch_values()]: temporal groups in order, each in the patch
  // order of an image; row values (channel, frame, y, x), frame f = frame 2g + f.
  std::vector<float> pixel_values;
  // (t, h, w) in patches: t temporal groups (frame pairs), h = resized.height / patch...
  std::array<int64_t, 3> grid_thw = {0, 0, 0};
  ImageSize original;  // frame size
  ImageSize resized;   // after smart_resize
  int64_t input_frames = 0;
  double fps = 0;
  std::vector<int64_t> sampled_indices;
  std::vector<double> timestamps;  // seconds, one per temporal group
  int64_t text_tokens = 0;         // of the text around its groups (VideoBudget::text_tokens)
  // Sampled fewer to fit the budget: the frames sampling at its rate would have taken;
  // 0 when those were sampled.
  int64_t frames_at_rate = 0;
  // Of the frames sampling chose, those left out as they do not decode (where the frame
  // that stands in for one was taken already, or the stream ended before it); the rest
  // are sampled_indices, each at its own time.
  int64_t frames_left_out = 0;
  // A stream that ends before its packets do: the frames those promised, more than
  // input_frames (those up to the last that decodes); 0 otherwise.
  int64_t promised_frames = 0;

  int64_t num_patches() const { return grid_thw[0] * grid_thw[1] * grid_thw[2]; }
  // Video tokens of one temporal group in the prompt (h * w / merge^2).
  int64_t tokens_per_group(int merge) const { return grid_thw[1] * grid_thw[2] / (merge * merge); }
};

// Samples, reads, resizes and patchifies the frames of `source`. `sampling` replaces
// params.sampling (a request's fps and frame counts); `budget` narrows the pixel range
// over all sampled frames within params.image's (see ClipBudget). With
// sampling.fit_to_budget, a clip whose pairs at the sampling rate would get fewer than
// kLeastTokensPerFramePair video tokens each (or their own size's, for smaller frames)
// beside their text samples the most frames, not under min_frames, that get them, spread
// evenly from its first frame to its last. A sampled frame the source cannot give
// (see VideoFrameSource::ReadFrame) is left out, never repeated: each frame is seen once,
// at its own time (frames_left_out, promised_frames). `name` ("video 1") starts every
// error. Throws Error(kTooLarge) over `limits` (before reading frames) and Error(kInvalidArgument)
// for fewer than temporal_patch_size sampled frames, a budget too small for them, frames of
// different sizes or under params.image.factor() pixels a side, and what the source throws. Only
// two resized frames are held at a time.
PreprocessedVideo PreprocessVideo(VideoFrameSource& source, const VideoProcessorParams& params,
                                  const FrameSampling& sampling, const VideoBudget& budget,
                                  const VideoLimits& limits, const std::string& name);

}  // namespace qvl
