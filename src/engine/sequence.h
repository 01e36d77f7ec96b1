// The engine's state of one live request (engine thread only).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/draft_lookup.h"
#include "engine/engine.h"
#include "engine/output_stream.h"
#include "engine/prepared_request.h"
#include "engine/sampler.h"
#include "engine/token_constraints.h"
#include "model/text_decoder.h"
#include "model/vision_tower.h"

namespace qvl {

// One answer of a request: a request with n choices runs as n sequences, the first of
// which prefills the prompt for all (see ForkChoice).
struct Sequence {
  enum class Phase { kQueued, kVision, kPrefill, kDecode };

  Sequence(RequestId id, int choice, std::shared_ptr<const PreparedRequest> req, UpdateSink sink,
           const Tokenizer& tokenizer, std::shared_ptr<const TokenTable> token_table,
           int64_t vocab);

  RequestId id;
  int choice;  // 0 .. n-1
  std::shared_ptr<const PreparedRequest> request;
  UpdateSink sink;
  Phase phase = Phase::kQueued;
  // Choices still to fork from this one when its prompt is prefilled (choice 0 only).
  int unforked_choices = 0;

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
  int images_to_encode = 0, images_encoded = 0;  // since the start, for PromptProgress
  std::unique_ptr<VisionEncoding> encoding;      // the image being encoded
  VisualFeatures features;                       // row pointers into `vision`

  Sampler sampler;
  DraftLength draft_length;
  int64_t drafted = 0, draft_accepted = 0;  // prompt-lookup tokens, for the timings
  TokenConstraints constraints;
  OutputStream output;
  std::vector<float> raw_logits;  // the model's own distribution, for logprobs
  std::vector<float> embedding;   // an embed request's answer, for its final update
  bool finished = false;          // the final update was sent

  // GenerationRequest::prompt_logprobs (choice 0 only: the choices share one prompt): the
  // entries of GenerationUpdate::prompt_tokens made so far, entry i for prompt token i,
  // held until an update carries them (prompt_logprobs_due false after).
  std::vector<GeneratedToken> prompt_logprobs;
  bool prompt_logprobs_due = false;
  // Whether the prompt's prefill must give the logits of every row, from the next entry's
  // on: those positions are computed, not taken from the prefix cache.
  bool NeedsPromptLogits() const {
    return prompt_logprobs_due && prompt_logprobs.size() < request->prompt.size();
  }

  // Timing (seconds since the epoch of NowSeconds()).
  double submitted = 0, started = 0, vision_done = 0, first_token = 0;
  double vision_seconds = 0;
  Usage usage;
  std::vector<ImageGrid> grids;
};

// Choice `choice` of `leader`'s request at the point where the leader's prompt is
// prefilled and its first token not yet sampled: the same tokens, positions, timings and
// vision encodings, its own sampler stream and grammar state. The engine gives it pages.
std::unique_ptr<Sequence> ForkChoice(const Sequence& leader, int choice, const Tokenizer& tokenizer,
                                     std::shared_ptr<const TokenTable> token_table, int64_t vocab);

// The next token of `seq` from its row of `logits` (modified in place): the request's
// constraints, then its sampler, then the output stream, which fills `update` with what
// the client now sees. Returns why the answer ends with this token, or kNone.
FinishReason SampleNextToken(Sequence& seq, float* logits, int64_t vocab, int32_t* token,
                             GenerationUpdate* update);

// Moves `seq`'s prompt_logprobs entries into `update` if they are still due, and makes
// them no longer due: all of them, or none when the prompt was not read through.
void HandOverPromptLogprobs(Sequence& seq, GenerationUpdate* update);

// The last update of `seq`: usage and the timings of every stage, as of `now`.
GenerationUpdate FinalUpdate(const Sequence& seq, FinishReason reason, double now);

}  // namespace qvl
