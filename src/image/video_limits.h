// Limits that protect the server from hostile or accidental huge videos. Like the image
// limits, each is checked before the memory or time it guards is spent: the file size
// before demuxing, the frame size and count from the container before any frame is
// decoded.
#pragma once

#include <cstdint>
#include <string>

namespace qvl {

struct VideoLimits {
  // Largest accepted video file (encoded bytes), or total of a frame list's files.
  int64_t max_encoded_bytes = int64_t{256} << 20;
  // Largest frame (width * height as stored); 4096 x 4096 covers 4K video.
  int64_t max_frame_pixels = int64_t{4096} * 4096;
  // Most frames a clip may have (all of them, before sampling): bounds decode time.
  int64_t max_input_frames = 36000;
  // Longest clip: frames / fps.
  double max_seconds = 600;
  // Most videos one request may carry.
  int max_videos_per_request = 4;
};

// Throws Error(kTooLarge) naming `name` when a clip of `frames` frames at `fps` is over
// max_input_frames or max_seconds.
void CheckVideoLength(int64_t frames, double fps, const VideoLimits& limits,
                      const std::string& name);

// Throws Error(kInvalidArgument) for a zero-sized frame and Error(kTooLarge) over
// max_frame_pixels.
void CheckFrameSize(int64_t width, int64_t height, const VideoLimits& limits,
                    const std::string& name);

}  // namespace qvl
