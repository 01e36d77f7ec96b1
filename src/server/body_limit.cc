#include "server/body_limit.h"

#include "engine/text_limit.h"

namespace qvl {

size_t DefaultMaxBodyBytes(const EngineOptions& engine) {
  const int64_t images = int64_t{engine.max_images_per_request} *
                         ((static_cast<int64_t>(engine.max_image_bytes) + 2) / 3 * 4);
  // One video at its largest: a request with several large videos needs --max-body-mb,
  // which keeps a server with the defaults from buffering gigabytes per request.
  const VideoLimits& video = engine.video_limits;
  const int64_t videos =
      video.max_videos_per_request > 0 ? (video.max_encoded_bytes + 2) / 3 * 4 : 0;
  const int64_t text =
      MaxPromptTextBytes(engine.context_tokens, kQwen3LongestTokenBytes) * kJsonTextGrowth;
  return static_cast<size_t>(images + videos + text + kJsonOverheadBytes);
}

}  // namespace qvl
