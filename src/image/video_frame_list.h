// A video given as its frames, each an encoded image (the {"type": "video", "video":
// [frames...], "fps": F} form of qwen-vl-utils and vLLM): frame k is shown at k / fps.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "image/image_limits.h"
#include "image/video_limits.h"
#include "image/video_processor.h"

namespace qvl {

class VideoFrameList : public VideoFrameSource {
 public:
  // `frames` (not owned) must outlive the list. Each frame is decoded only when read,
  // like an image (EXIF orientation applied, RGBA onto white); its pixel count is held
  // to limits.max_frame_pixels. `name` ("video 1") starts every error message.
  VideoFrameList(std::vector<std::span<const uint8_t>> frames, double fps,
                 const VideoLimits& limits, std::string name);

  int64_t frame_count() const override { return static_cast<int64_t>(frames_.size()); }
  double fps() const override { return fps_; }
  int64_t ReadFrame(int64_t index, RgbxImage* out) override;

 private:
  std::vector<std::span<const uint8_t>> frames_;
  double fps_;
  ImageLimits limits_;
  std::string name_;
  RgbxImage decoded_;
  std::vector<uint8_t> scratch_;
};

}  // namespace qvl
