// The request policy the server's parser tests share: the served model's names (its id
// and the alias `make serve` adds) and the Qwen3-VL token sizes (an image token is
// 32×32 pixels, a video token a pair of them).
#pragma once

#include "server/chat_request.h"

namespace qvl::testing {

inline ChatRequestPolicy TestChatPolicy() {
  ChatRequestPolicy p;
  p.model_names = {"Qwen/Qwen3-VL-2B-Instruct", "qwen3-vl"};
  p.pixels_per_image_token = 32 * 32;
  p.pixels_per_video_token = 2 * 32 * 32;
  return p;
}

}  // namespace qvl::testing
