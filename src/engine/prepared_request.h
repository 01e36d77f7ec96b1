// A request after the work that can fail on bad input: images decoded and cut into
// patches, the chat template rendered and tokenized, positions and limits worked out.
// Built on the submitting thread (see PrepareRequest), consumed by the engine thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/output_stream.h"
#include "engine/request.h"
#include "engine/sampler.h"
#include "engine/token_bans.h"
#include "image/image_size.h"
#include "model/image_grid.h"
#include "model/mrope.h"

namespace qvl {

struct VisionOutput;

struct PreparedImage {
  std::vector<float> pixels;  // [patches, C*T*P*P]
  GridThw grid;
  ImageGrid info;  // reported back to the client
  uint64_t content_hash = 0;
  int64_t first_token = 0;  // index of its first pad token in the prompt
  int64_t end_token = 0;    // one past its last (a video's groups have text between them)
  std::shared_ptr<const VisionOutput> shared_encoding;  // found in the shared cache

  // Sets grid and the sizes, grid and tokens of info from what preprocessing gave.
  void SetGeometry(const std::array<int64_t, 3>& grid_thw, ImageSize original, ImageSize resized,
                   int merge) {
    grid = {grid_thw[0], grid_thw[1], grid_thw[2]};
    info.width = original.width;
    info.height = original.height;
    info.resized_width = resized.width;
    info.resized_height = resized.height;
    info.grid_t = grid.t;
    info.grid_h = grid.h;
    info.grid_w = grid.w;
    info.tokens = grid.tokens(merge);
  }
};

struct PreparedRequest {
  std::vector<int32_t> prompt;  // token ids, image pads expanded
  std::vector<uint64_t> keys;   // prefix-cache key per prompt token
  MropePositions positions;     // of the prompt
  // Images and videos (info.frames > 0) in prompt order.
  std::vector<PreparedImage> images;
  SamplerConfig sampling;  // of choice 0; choice i draws with seed + i
  int choices = 1;
  std::vector<LogitBias> logit_bias;  // token ids checked against the vocabulary
  std::shared_ptr<const Grammar> grammar;
  TokenBans bans;
  OutputLimits output;
  bool embed = false;        // GenerationRequest::embed: the answer is the prompt's embedding
  int prompt_logprobs = -1;  // GenerationRequest::prompt_logprobs; -1 for an embed request
  double preprocess_ms = 0;
  std::string request_id;        // GenerationRequest::request_id, for the engine's log lines
  bool report_progress = false;  // GenerationRequest::report_progress
};

}  // namespace qvl
