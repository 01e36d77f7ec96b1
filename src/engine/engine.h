// The engine: one thread owns the model, the KV pool and the caches, and runs every live
// request together (continuous batching). Any thread may submit and cancel.
//
// Submit prepares a request on the caller's thread (image decoding and preprocessing,
// chat template, tokenization, limits), so bad input fails at once with an Error and
// costs the engine nothing; the prepared request then waits in a bounded queue. Each
// engine step runs one batch through the decoder: a decode token for every generating
// sequence plus prompt chunks up to a token budget, with vision encodings in between,
// in arrival order, so a long image prompt never freezes the other streams.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/request.h"
#include "image/video_limits.h"

namespace qvl {

class Qwen3VLModel;
class RequestPreparer;
class Tokenizer;
class SharedEncodingStore;

struct EngineOptions {
  int threads = 0;                 // compute threads; 0 = one per physical core
  int max_sequences = 8;           // generating at once
  int max_queue = 64;              // waiting to start; more is refused (kUnavailable)
  int64_t context_tokens = 16384;  // per sequence: prompt + completion
  int default_max_tokens = 2048;   // when a request gives none
  // A Thinking model's reasoning budget when a request gives none
  // (GenerationRequest::reasoning_budget); -1: none.
  int default_reasoning_budget = -1;
  int prefill_chunk_tokens = 512;  // prompt tokens per engine step
  // Speculative decoding (engine/draft_lookup.h): up to this many tokens per decode step
  // guessed from the sequence's own history or its grammar and verified in the same
  // pass, in rows the kernels' row tile leaves free; the answer is the same token for
  // token. 0 turns it off.
  int draft_tokens = 3;
  // While answers stream, the longest the engine works on other requests' images and
  // prompts between two of their tokens: vision runs in slices of whole blocks and prompt
  // chunks shrink to fit it. Higher favours the newcomers' time to first token (each
  // pause costs the newcomers one decode step); lower, smoother streams.
  double max_stall_seconds = 2.0;
  size_t kv_cache_bytes = size_t{1} << 30;
  int kv_page_tokens = 16;
  size_t image_cache_bytes = size_t{256} << 20;  // vision encodings kept for reuse
  // Image budget, in pixels or in image tokens (give one of each pair; see
  // image_budget_policy.h). min: 0 = preprocessor_config.json's. max: what an image may
  // become when its request says nothing, 0 = kDefaultMaxImageTokens (sized for a CPU).
  // high_detail: what `detail: high` and a request's own max may reach, 0 =
  // kDefaultHighDetailImageTokens (never below max).
  int64_t min_pixels = 0;
  int64_t max_pixels = 0;
  int64_t min_image_tokens = 0;
  int64_t max_image_tokens = 0;
  int64_t high_detail_image_tokens = 0;
  // Video budget in video tokens (a frame pair of 32 x 32 pixels; see
  // video_budget_policy.h), over all sampled frames of a video. min: 0 = the model's.
  // max: a video's budget when its request sets none, 0 = kDefaultMaxVideoTokens (sized
  // for a CPU). limit: the most a request may ask for, 0 = kDefaultVideoTokenLimit
  // (never below max).
  int64_t min_video_tokens = 0;
  int64_t max_video_tokens = 0;
  int64_t video_token_limit = 0;
  // 8 images at the default budget take ~10k of the 16k context and over a minute of
  // vision on 2 cores; 16 MiB holds a 50-megapixel JPEG. With them the default body
  // limit (server/body_limit.h) is 190 MiB.
  int max_images_per_request = 8;
  size_t max_image_bytes = size_t{16} << 20;
  int64_t max_image_pixels = int64_t{8192} * 8192;  // decoded pixels, checked before decoding
  VideoLimits video_limits;  // bytes, frame size, frames, seconds, videos per request
  int decode_slots = 0;      // images or videos decoding at once; 0 = one per core
  // Called on the engine thread once it has had nothing to do for kIdleHookMs after
  // some work: the server hands freed memory back to the system there.
  std::function<void()> on_idle;
  // Vision encodings shared with other replicas (--redis); null = none.
  std::shared_ptr<SharedEncodingStore> shared_encodings;
};

constexpr int kIdleHookMs = 500;

// Counters for /metrics; a consistent snapshot.
struct EngineStats {
  int64_t queued = 0;
  int64_t active = 0;
  int64_t requests_finished = 0;
  int64_t requests_cancelled = 0;
  int64_t requests_failed = 0;
  int64_t prompt_tokens = 0;
  int64_t cached_prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t draft_tokens = 0;           // drafted for speculative decoding
  int64_t draft_tokens_accepted = 0;  // of those, kept
  int64_t images_encoded = 0;
  int64_t image_cache_hits = 0;
  double vision_seconds = 0;
  int64_t kv_pages_total = 0;
  int64_t kv_pages_used = 0;
  int64_t prefix_cache_pages = 0;
};

using RequestId = uint64_t;

class Engine {
 public:
  Engine(std::unique_ptr<Qwen3VLModel> model, const EngineOptions& options);
  ~Engine();  // cancels everything still running, joins the engine thread
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Prepares and enqueues. Throws Error: kInvalidArgument (bad image, bad parameter, a
  // prompt over the context — a 400 in OpenAI's API), kTooLarge (image bytes or pixels
  // over the limits), kUnavailable (queue full, shutting down). Updates then arrive
  // through `sink` on the engine thread, the last one with finished == true — exactly
  // once, even when cancelled.
  RequestId Submit(GenerationRequest request, UpdateSink sink);
  // The inputs of one request (an embeddings request's list), sinks[i] for requests[i]:
  // all are prepared before any is enqueued, so the first error refuses them all, and
  // --queue admits them as the one request they are (a list longer than the queue is not
  // "busy" on an idle server). Returns their ids in order.
  std::vector<RequestId> SubmitAll(std::vector<GenerationRequest> requests,
                                   std::vector<UpdateSink> sinks);

  // Stops a request early (client gone); its final update reports kCancelled. Unknown or
  // finished ids are ignored.
  void Cancel(RequestId id);

  // Stops accepting work; in-flight requests get `grace_seconds` to finish, then are
  // cancelled. Returns when the engine thread is idle.
  void Shutdown(double grace_seconds);

  EngineStats Stats() const;
  const Qwen3VLModel& model() const;
  const EngineOptions& options() const;
  // Pixels one image token covers (patch size x merge size, squared: 32 x 32 for
  // Qwen3-VL), from the model's preprocessor_config.json.
  int64_t pixels_per_image_token() const;
  // Pixels over all sampled frames of a video covered by one video token.
  int64_t pixels_per_video_token() const;
  // The image and video budgets and processor settings in force (GET /props reports them).
  const RequestPreparer& preparer() const;
  // The model's tokenizer (tokenizer.json), as the prompts are tokenized with.
  const Tokenizer& tokenizer() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace qvl
