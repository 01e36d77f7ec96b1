// The engine's state of one live request (engine thread only).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/engine.h"
#include "engine/output_stream.h"
#include "engine/prepared_request.h"
#include "engine/sampler.h"
#include "model/text_decoder.h"
#include "model/vision_tower.h"

namespace qvl {

struct Sequence {
  enum class Phase { kQueued, kVision, kPrefill, kDecode };

  Sequence(RequestId id, PreparedRequest req, UpdateSink sink, const Tokenizer& tokenizer,
           int64_t vocab)
      : id(id),
        request(std::move(req)),
        sink(std::move(sink)),
        sampler(request.sampling, vocab),
        output(tokenizer, request.output) {
    tokens = request.prompt;
    keys = request.keys;
    positions = request.positions;
    sampler.AddPromptTokens(tokens);
  }

  RequestId id;
  PreparedRequest request;
  UpdateSink sink;
  Phase phase = Phase::kQueued;

  // Every token whose KV is or will be in the cache: the prompt, then each generated
  // token once sampled (the newest is fed by the next decode step).
  std::vector<int32_t> tokens;
  std::vector<uint64_t> keys;  // prefix-cache key per token
  MropePositions positions;    // per token
  int64_t cached = 0;          // tokens whose KV is in the cache
  int64_t reused = 0;          // of those, taken from the prefix cache at the start
  std::vector<int32_t> pages;  // block table

  // Vision: one encoding per image that has pad tokens left to prefill.
  std::vector<std::shared_ptr<const VisionOutput>> vision;  // per image; null if not needed
  size_t next_image = 0;
  std::unique_ptr<VisionEncoding> encoding;  // the image being encoded
  VisualFeatures features;                   // row pointers into `vision`

  Sampler sampler;
  OutputStream output;
  bool finished = false;  // the final update was sent

  // Timing (seconds since the epoch of NowSeconds()).
  double submitted = 0, started = 0, vision_done = 0, first_token = 0;
  double vision_seconds = 0;
  Usage usage;
  std::vector<ImageGrid> grids;
};

}  // namespace qvl
