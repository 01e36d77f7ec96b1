#include "image/video_frame_list.h"

#include <utility>

#include "base/error.h"
#include "image/exif_orientation.h"
#include "image/image_decoder.h"

namespace qvl {

VideoFrameList::VideoFrameList(std::vector<std::span<const uint8_t>> frames, double fps,
                               const VideoLimits& limits, std::string name)
    : frames_(std::move(frames)), fps_(fps), name_(std::move(name)) {
  int64_t bytes = 0;
  for (const auto& f : frames_) bytes += static_cast<int64_t>(f.size());
  if (bytes > limits.max_encoded_bytes) {
    Fail(ErrorCode::kTooLarge, name_, ": its frames are ", bytes, " bytes; at most ",
         limits.max_encoded_bytes, " are accepted");
  }
  limits_.max_encoded_bytes = limits.max_encoded_bytes;
  limits_.max_decoded_pixels = limits.max_frame_pixels;
}

int64_t VideoFrameList::ReadFrame(int64_t index, RgbxImage* out) {
  if (index < 0 || index >= frame_count()) {
    Fail(ErrorCode::kInternal, name_, ": frame ", index, " of ", frame_count(), " read");
  }
  const std::string frame_name = StrCat(name_, " frame ", index);
  const DecodedImageInfo info =
      DecodeImage(frames_[index], limits_, frame_name, &decoded_, &scratch_);
  if (OrientationTransforms(info.orientation)) {
    ApplyOrientation(decoded_, info.orientation, out);
  } else {
    std::swap(decoded_, *out);
  }
  return index;
}

}  // namespace qvl
