// Video files decoded with FFmpeg (libavformat demuxes, libavcodec decodes, libswscale
// converts): MP4/MOV, Matroska/WebM, AVI, MPEG-TS, FLV and Ogg holding whatever codec
// libavcodec has (H.264, HEVC, VP8, VP9, AV1, ...). Frames come out upright, turned as
// the stream's display matrix says (a phone's portrait clip). The container gives the frame rate
// and frame count, so sampling is decided before anything is decoded; then only the
// groups of pictures holding sampled frames are decoded and only the sampled frames
// converted to RGB. Planar RGB sources
// (gbrp, as lossless libx264rgb writes) are copied exactly; YUV goes through swscale with
// the stream's colour matrix and range.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "image/video_limits.h"
#include "image/video_processor.h"

namespace qvl {

struct VideoDecodeOptions {
  // Skip to the keyframe before a sampled frame instead of decoding every frame up to
  // it, where the packets carry distinct timestamps. Off: every frame is decoded.
  bool seek = true;
  int threads = 2;  // libavcodec frame threads
};

class VideoFileDecoder : public VideoFrameSource {
 public:
  // Opens `bytes` (not copied; must outlive the decoder) and counts its frames by
  // demuxing (packets only, nothing decoded). `name` ("video 1") starts every error.
  // Throws Error(kTooLarge) over `limits` (file size, frame size as declared, frame
  // count, seconds), checked before any frame is decoded, and Error(kInvalidArgument)
  // for files FFmpeg cannot read, without a video stream or a frame rate.
  VideoFileDecoder(std::span<const uint8_t> bytes, const VideoLimits& limits, std::string name,
                   const VideoDecodeOptions& options = {});
  ~VideoFileDecoder() override;

  int64_t frame_count() const override;
  double fps() const override;
  // Decodes frame `index`, the index-th in presentation order: from the keyframe before
  // it when that lies past what was decoded so far, else on from there (frames before it
  // are decoded, not converted). Returns the index of the frame given: where `index`'s
  // packet decodes to no frame, the next one that does (a larger index; the same one
  // again for a later `index` it covers); where the stream ends before `index` (its
  // packets promised more frames than decode), its last frame, and frame_count() is from
  // then on the frames up to that one. Throws Error(kInvalidArgument) for corrupt data.
  int64_t ReadFrame(int64_t index, RgbxImage* out) override;

  // Frames decoded so far (those skipped to reach a sampled one included), for timings.
  int64_t decoded_frames() const;
  // A file cut short (a partial download, a recording that never finished): the seconds
  // its container declares, when its frames (frame_count() / fps()) fall short of them
  // by more than half a second and three frames. 0 for a whole file, and where the
  // length is measured from the frames that are there (MPEG-TS).
  double declared_seconds() const;
  // The frame size as shown (upright).
  int width() const;
  int height() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Whether `bytes` start like a container VideoFileDecoder reads (ISO BMFF "ftyp",
// Matroska/WebM EBML, RIFF AVI, MPEG-TS sync bytes, FLV, Ogg, GIF): for checking that
// what a caller gives as a video is one. A GIF is an image as well.
bool LooksLikeVideoFile(std::span<const uint8_t> bytes);

}  // namespace qvl
