#include "server/body_limit.h"

#include "engine/text_limit.h"

namespace qvl {

size_t DefaultMaxBodyBytes(const EngineOptions& engine) {
  const int64_t images = int64_t{engine.max_images_per_request} *
                         ((static_cast<int64_t>(engine.max_image_bytes) + 2) / 3 * 4);
  const int64_t text =
      MaxPromptTextBytes(engine.context_tokens, kQwen3LongestTokenBytes) * kJsonTextGrowth;
  return static_cast<size_t>(images + text + kJsonOverheadBytes);
}

}  // namespace qvl
