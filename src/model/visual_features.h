// The decoder's view of encoded images: row pointers into VisionOutputs, one per image
// pad token, for the final embeddings and every DeepStack level.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/text_decoder.h"
#include "model/vision_tower.h"

namespace qvl {

// Appends the `tokens` feature rows (each d floats) of one image's encoding to f, which
// gets `deepstack_layers` DeepStack levels. A null encoding appends null rows: the
// image's pad tokens are all in the KV cache already and are never read.
void AppendVisualFeatures(const VisionOutput* vis, int64_t tokens, int64_t d,
                          size_t deepstack_layers, VisualFeatures* f);

// The same for rows [first, first + count) of the encoding: one temporal group of a
// video, whose pad tokens are a run of their own between timestamps.
void AppendVisualFeatureRows(const VisionOutput* vis, int64_t first, int64_t count, int64_t d,
                             size_t deepstack_layers, VisualFeatures* f);

}  // namespace qvl
