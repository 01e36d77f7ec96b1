// One video of a request made ready for the engine: decoded (a frame list or a file),
// sampled, resized and cut into patches, with its content identity and its layout in
// the prompt (a timestamp and a vision block per frame pair).
#pragma once

#include <string_view>

#include "engine/prepared_request.h"
#include "engine/request.h"
#include "image/video_budget.h"
#include "image/video_limits.h"
#include "image/video_processor.h"
#include "text/chat_template.h"

namespace qvl {

struct PreparedVideoInput {
  PreparedImage visual;  // pixels [patches, C*T*P*P], grid (t = frame pairs, h, w)
  VideoPromptLayout layout;
  // Of visual.info.decode_ms, the part spent opening, demuxing and decoding the file (or
  // decoding the frame images) and converting the sampled frames to RGB; the rest is
  // sampling, resizing and patches.
  double read_ms = 0;
};

// The identity of the video's bytes: its file, or its frames one by one.
uint64_t VideoBytesHash(const VideoInput& input);

// `bytes_hash` is VideoBytesHash(input), computed once by a caller that keys on it too.
// Throws Error: kTooLarge over `limits`, kInvalidArgument for broken or unsupported
// files and frames, clips too short or with frames of different sizes (see
// PreprocessVideo and VideoFileDecoder), each naming input.name. What it logs about the
// clip (frames left out, a file cut short) names `request_id` when given.
PreparedVideoInput PrepareVideo(const VideoInput& input, uint64_t bytes_hash,
                                const VideoProcessorParams& params, const VideoBudget& budget,
                                const VideoLimits& limits, std::string_view request_id = {});

}  // namespace qvl
