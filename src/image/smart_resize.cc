#include "image/smart_resize.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace qvl {

namespace {

// Both smart_resizes: an image is one frame, rounded to one.
ImageSize SmartResizeFrames(ImageSize size, int64_t frames, int64_t rounded_frames, int factor,
                            int64_t min_pixels, int64_t max_pixels, const std::string& name) {
  const int64_t height = size.height, width = size.width;
  if (height < factor || width < factor) {
    Fail(ErrorCode::kInvalidArgument, name, " is ", width, "x", height,
         " pixels; both sides must be at least ", factor, " pixels");
  }
  const double ratio =
      static_cast<double>(std::max(height, width)) / static_cast<double>(std::min(height, width));
  if (ratio > kMaxAspectRatio) {
    Fail(ErrorCode::kInvalidArgument, name, " is ", width, "x", height,
         " pixels; the longer side may be at most ", kMaxAspectRatio, " times the shorter one");
  }
  const double f = factor;
  const double area = static_cast<double>(height * width) * static_cast<double>(frames);
  const double t = static_cast<double>(rounded_frames);
  // std::nearbyint rounds half to even in the default rounding mode, like Python's round.
  double h = std::nearbyint(static_cast<double>(height) / f) * f;
  double w = std::nearbyint(static_cast<double>(width) / f) * f;
  if (t * h * w > static_cast<double>(max_pixels)) {
    const double beta = std::sqrt(area / static_cast<double>(max_pixels));
    h = std::max(f, std::floor(static_cast<double>(height) / beta / f) * f);
    w = std::max(f, std::floor(static_cast<double>(width) / beta / f) * f);
  } else if (t * h * w < static_cast<double>(min_pixels)) {
    const double beta = std::sqrt(static_cast<double>(min_pixels) / area);
    h = std::ceil(static_cast<double>(height) * beta / f) * f;
    w = std::ceil(static_cast<double>(width) * beta / f) * f;
  }
  constexpr int64_t kMaxSide = int64_t{1} << 24;
  if (h > static_cast<double>(kMaxSide) || w > static_cast<double>(kMaxSide)) {
    Fail(ErrorCode::kTooLarge, name, ": resizing ", width, "x", height, " pixels for min_pixels ",
         min_pixels, " gives sides over ", kMaxSide, " pixels");
  }
  return {static_cast<int>(w), static_cast<int>(h)};
}

}  // namespace

ImageSize SmartResize(ImageSize size, int factor, int64_t min_pixels, int64_t max_pixels,
                      const std::string& name) {
  return SmartResizeFrames(size, 1, 1, factor, min_pixels, max_pixels, name);
}

ImageSize SmartResizeVideo(ImageSize size, int64_t frames, int temporal_factor, int factor,
                           int64_t min_pixels, int64_t max_pixels, const std::string& name) {
  if (frames < temporal_factor) {
    Fail(ErrorCode::kInvalidArgument, name, " has ", frames, " sampled frame",
         frames == 1 ? "" : "s", "; a video needs at least ", temporal_factor);
  }
  return SmartResizeFrames(size, frames, SmartResizeFrameCount(frames, temporal_factor), factor,
                           min_pixels, max_pixels, name);
}

int64_t SmartResizeFrameCount(int64_t frames, int temporal_factor) {
  const double tf = temporal_factor;
  return static_cast<int64_t>(std::nearbyint(static_cast<double>(frames) / tf) * tf);
}

}  // namespace qvl
