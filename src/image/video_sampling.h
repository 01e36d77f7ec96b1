// Which frames of a clip the model sees and when they were shown: transformers'
// Qwen3VLVideoProcessor.sample_frames and Qwen3VLProcessor's timestamps (fixtures README
// 7.2 and 7.5).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qvl {

struct FrameSampling {
  double fps = 2.0;  // frames kept per second of video
  int64_t min_frames = 4;
  int64_t max_frames = 768;
  // The request left sampling to the server (no fps, frame counts of its own): a clip
  // whose frames at this rate cannot fit its budget at a legible size samples fewer,
  // over its whole length (PreprocessVideo). A client's own choice is kept, or refused.
  bool fit_to_budget = false;
};

// The indices of the frames kept out of `total` frames shown at `fps`:
//   n = min(max(int(total / fps * sampling.fps), min_frames), max_frames, total)
//   indices = round(linspace(0, total - 1, n))   (float64, round half to even)
// Strictly increasing. Throws Error(kInvalidArgument) naming `name` for no frames or an
// fps that is not a positive finite number.
std::vector<int64_t> SampleFrameIndices(int64_t total, double fps, const FrameSampling& sampling,
                                        const std::string& name);

// The time of each temporal group in seconds: the indices padded to a multiple of
// `temporal_patch_size` by repeating the last, then per group the mean of its first and
// last frame's time index / fps.
std::vector<double> GroupTimestamps(const std::vector<int64_t>& indices, double fps,
                                    int temporal_patch_size);

}  // namespace qvl
