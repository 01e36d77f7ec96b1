#include "image/video_sampling.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace qvl {

std::vector<int64_t> SampleFrameIndices(int64_t total, double fps, const FrameSampling& sampling,
                                        const std::string& name) {
  if (total < 1) Fail(ErrorCode::kInvalidArgument, name, " has no frames");
  if (!(fps > 0) || !std::isfinite(fps)) {
    Fail(ErrorCode::kInvalidArgument, name, ": fps must be a positive number, got ", fps);
  }
  // int() of Python truncates toward zero; the quotient is positive. Clamped first so
  // that an absurd ratio cannot overflow the conversion.
  const double wanted = std::min(static_cast<double>(total) / fps * sampling.fps, 1e15);
  int64_t n = static_cast<int64_t>(wanted);
  n = std::min({std::max(n, sampling.min_frames), sampling.max_frames, total});
  n = std::max<int64_t>(n, 1);
  std::vector<int64_t> indices(n);
  if (n == 1) {
    indices[0] = 0;
    return indices;
  }
  // numpy.linspace: start + i * step, the last value exactly the end point.
  const double end = static_cast<double>(total - 1);
  const double step = end / static_cast<double>(n - 1);
  for (int64_t i = 0; i < n; ++i) {
    const double v = i + 1 == n ? end : static_cast<double>(i) * step;
    indices[i] = static_cast<int64_t>(std::nearbyint(v));  // half to even, as numpy.round
  }
  return indices;
}

std::vector<double> GroupTimestamps(const std::vector<int64_t>& indices, double fps,
                                    int temporal_patch_size) {
  std::vector<int64_t> padded = indices;
  while (!padded.empty() && padded.size() % temporal_patch_size != 0) {
    padded.push_back(padded.back());
  }
  std::vector<double> times;
  for (size_t g = 0; g < padded.size(); g += temporal_patch_size) {
    const double first = static_cast<double>(padded[g]) / fps;
    const double last = static_cast<double>(padded[g + temporal_patch_size - 1]) / fps;
    times.push_back((first + last) / 2);
  }
  return times;
}

}  // namespace qvl
