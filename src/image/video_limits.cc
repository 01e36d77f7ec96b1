#include "image/video_limits.h"

#include "base/error.h"

namespace qvl {

void CheckVideoLength(int64_t frames, double fps, const VideoLimits& limits,
                      const std::string& name) {
  if (frames > limits.max_input_frames) {
    // A file's frames are counted only up to one past the limit.
    Fail(ErrorCode::kTooLarge, name, " has more than ", limits.max_input_frames,
         " frames, the most accepted");
  }
  if (fps > 0 && static_cast<double>(frames) / fps > limits.max_seconds) {
    Fail(ErrorCode::kTooLarge, name, " is ", static_cast<double>(frames) / fps,
         " seconds long; at most ", limits.max_seconds, " seconds are accepted");
  }
}

void CheckFrameSize(int64_t width, int64_t height, const VideoLimits& limits,
                    const std::string& name) {
  if (width <= 0 || height <= 0) {
    Fail(ErrorCode::kInvalidArgument, name, " has frames of ", width, "x", height, " pixels");
  }
  // Division instead of width * height: the product of two header fields may overflow.
  if (width > limits.max_frame_pixels / height) {
    Fail(ErrorCode::kTooLarge, name, " has frames of ", width, "x", height, " pixels; at most ",
         limits.max_frame_pixels, " pixels per frame are accepted");
  }
}

}  // namespace qvl
