// The engine's state and its thread's work, shared by engine.cc (submission, admission,
// the scheduling loop) and engine_step.cc (one step's vision slices, batched forward
// pass and sampling). Internal to engine/.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <unordered_set>
#include <vector>

#include "base/thread_pool.h"
#include "engine/engine.h"
#include "engine/image_cache.h"
#include "engine/kv_paging.h"
#include "engine/loaded_model.h"
#include "engine/request_preparer.h"
#include "engine/sequence.h"
#include "grammar/token_table.h"
#include "model/qwen3vl.h"

namespace qvl {

// Most logit rows one step computes for prompts whose logprobs are asked for
// (GenerationRequest::prompt_logprobs), which want a row per token where others want one
// per prompt: a row is vocab_size floats (0.6 MB for Qwen3-VL's 151,936 tokens), so their
// prompt chunks are cut to this many tokens a step to keep the logits buffer small.
inline constexpr int64_t kPromptLogprobRows = 64;

class Engine::Impl {
 public:
  Impl(std::unique_ptr<Qwen3VLModel> model, const EngineOptions& options);
  ~Impl();

  RequestId Submit(GenerationRequest request, UpdateSink sink);
  std::vector<RequestId> SubmitAll(std::vector<GenerationRequest> requests,
                                   std::vector<UpdateSink> sinks);
  void Cancel(RequestId id);
  void Shutdown(double grace_seconds);
  EngineStats Stats() const;

  const Qwen3VLModel& model() const { return *model_; }
  const EngineOptions& options() const { return options_; }
  const RequestPreparer& preparer() const { return *preparer_; }
  const Tokenizer& tokenizer() const { return tokenizer_; }

 private:
  using SequencePtr = std::unique_ptr<Sequence>;

  void Run();
  // One scheduling step; false when there was nothing to do.
  bool Step();
  void TakeIncoming();
  void ApplyCancellations();
  void AdmitWaiting();
  // Claims KV pages (reusing a cached prefix) and looks up vision encodings.
  bool TryStart(Sequence& seq);
  void Preempt(Sequence& seq);
  // Vision blocks for `seq` until the next block would end past `deadline` or the engine
  // has something to look at (at least one block).
  void RunVision(Sequence& seq, double deadline);
  void ReportProgress(const Sequence& seq);
  // Whether a cancellation, a new request or a shutdown waits for the engine thread: a
  // long encode stops between blocks for them, so that a client who hung up does not
  // hold everyone behind an image encoded for no one.
  bool Interrupted() const;
  void BuildFeatures(Sequence& seq);
  // Decode steps of every streaming sequence plus prompt chunks that end by `deadline`;
  // none when not even one chunk fits and the step has done vision work.
  void RunBatch(double deadline, bool vision_ran);
  // Slots of --parallel taken: each live sequence and the choices it will fork.
  int64_t SlotsInUse() const;
  // The token tables of constrained decoding, built when the first request needs them.
  std::shared_ptr<const TokenTable> GrammarTokens();
  // Starts choices 1..n-1 of `leader`'s request from its prefilled prompt: they share its
  // full KV pages, copy its last partial one, and sample from the same `logits`.
  void ForkChoices(Sequence& leader, const float* logits);
  void OnLogits(Sequence& seq, float* logits);
  // The prompt_logprobs entries that prompt chunk `c` of `seq` gives: its logits rows
  // (`logits`, one per token of the chunk) each predict the token after theirs.
  void OnPromptLogits(Sequence& seq, const DecoderChunk& c, const float* logits);
  void OnEmbedding(Sequence& seq, int64_t row);
  // Guesses `seq`'s next tokens into `out`: what its grammar fixes, else a prompt lookup
  // (draft_lookup.h). Returns how many.
  int Draft(const Sequence& seq, std::span<int32_t> out) const;
  void Finish(Sequence& seq, FinishReason reason, const std::string& error = {},
              ErrorCode code = ErrorCode::kInternal);
  void RemoveFinished();
  // Queue depth, live sequences and KV use as /metrics shows them.
  void PublishOccupancy();

  std::unique_ptr<Qwen3VLModel> model_;
  EngineOptions options_;
  ModelSettings settings_;
  const Tokenizer& tokenizer_ = settings_.tokenizer;
  std::unique_ptr<RequestPreparer> preparer_;
  int64_t vocab_;
  std::vector<int32_t> eos_ids_;
  std::once_flag grammar_tokens_once_;
  std::shared_ptr<const TokenTable> grammar_tokens_;

  // Shared with submitting threads.
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<SequencePtr> incoming_;
  std::unordered_set<RequestId> cancel_requests_;
  bool accepting_ = true;
  bool stop_ = false;
  double cancel_all_at_ = 0;  // after Shutdown: when to cancel what is still running
  RequestId next_id_ = 1;
  EngineStats stats_;
  int64_t slots_in_use_ = 0;  // SlotsInUse() as of the last PublishOccupancy

  // Engine thread only.
  KvPaging kv_;
  ImageCache images_;
  std::deque<SequencePtr> waiting_;
  std::vector<SequencePtr> active_;
  std::vector<float> logits_;
  std::vector<float> fork_logits_;  // a forked choice's copy of its leader's logits
  std::vector<std::pair<int32_t, float>> prompt_top_;  // TokenLogprobs' scratch
  std::vector<DecoderChunk> chunks_;
  std::vector<Sequence*> chunk_owner_;
  // A decode chunk's tokens (the newest, then its draft) and M-RoPE rows, n each.
  std::vector<int32_t> decode_tokens_;
  std::vector<int32_t> decode_positions_;
  std::vector<int32_t> never_drafted_;  // image and video pad tokens
  // Measured by the last step with prompt chunks; sizes chunks to the stall budget.
  double prefill_tokens_per_second_ = 0;
  std::unique_ptr<ThreadPool> pool_;
  std::thread thread_;
};

}  // namespace qvl
