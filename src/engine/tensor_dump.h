// A golden-style dump of one request: every intermediate tensor under the names the
// reference fixtures use (input_ids, pixel_values, position_ids, vision.*,
// image_embeds, deepstack.N, text.layer_out.N, text.final_norm_last, logits_last,
// greedy_tokens, decode.topk_*), so a port can be compared with a reference stage by
// stage. Runs the model directly, one request, no batching.
#pragma once

#include <string>
#include <vector>

#include "engine/request_preparer.h"
#include "model/qwen3vl.h"
#include "model/safetensors.h"

namespace qvl {

struct DumpOptions {
  int tokens = 16;  // greedy steps
  int top_k = 20;   // width of decode.topk_*
  // Teacher forcing: when not empty, decode step k feeds forced[k-1] instead of the
  // engine's own choice, so decode.topk_* stay comparable after a divergence.
  std::vector<int32_t> forced;
  int threads = 0;
};

// Throws Error for a bad request (as the server would).
std::vector<TensorData> DumpRequest(Qwen3VLModel& model, const RequestPreparer& preparer,
                                    const GenerationRequest& request, const DumpOptions& options);

}  // namespace qvl
