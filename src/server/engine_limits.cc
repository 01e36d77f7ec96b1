#include "server/engine_limits.h"

#include "engine/request_preparer.h"

namespace qvl {

void TakeEngineLimits(const Engine& engine, ChatRequestPolicy* policy) {
  policy->pixels_per_image_token = engine.pixels_per_image_token();
  policy->pixels_per_video_token = engine.pixels_per_video_token();
  policy->max_images = engine.options().max_images_per_request;
  policy->media.max_image_bytes = static_cast<int64_t>(engine.options().max_image_bytes);
  policy->media.video = engine.options().video_limits;
  policy->chat_template = engine.preparer().chat_template();
}

}  // namespace qvl
