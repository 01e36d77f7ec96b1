// The default limit on a request body (`qvl serve --max-body-mb`), derived from the
// limits that decide what a valid request can hold, so that raising one of them raises
// it too and nothing larger is ever buffered.
#pragma once

#include <cstddef>

#include "engine/engine.h"

namespace qvl {

// JSON can spell a byte of text in up to 3 bytes in practice (\uXXXX for a 2-byte UTF-8
// character, a surrogate pair for a 4-byte one).
inline constexpr int64_t kJsonTextGrowth = 3;
// Keys, roles, punctuation and data: URL headers.
inline constexpr int64_t kJsonOverheadBytes = int64_t{1} << 20;

// Every image at max_image_bytes and one video at its max_encoded_bytes as base64 (4/3 of
// their bytes), plus the most text that can fit in the context (MaxPromptTextBytes with
// Qwen3's longest token) as JSON.
size_t DefaultMaxBodyBytes(const EngineOptions& engine);

}  // namespace qvl
