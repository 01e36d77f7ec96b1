#include "engine/engine.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <random>
#include <span>
#include <thread>
#include <unordered_set>

#include "base/log.h"
#include "base/thread_pool.h"
#include "base/timer.h"
#include "engine/draft_lookup.h"
#include "engine/image_cache.h"
#include "engine/kv_paging.h"
#include "engine/loaded_model.h"
#include "engine/request_preparer.h"
#include "engine/sequence.h"
#include "engine/shared_encoding_store.h"
#include "grammar/token_table.h"
#include "model/qwen3vl.h"
#include "model/visual_features.h"
#include "ops/linear.h"
#include "ops/norm.h"
#include "text/chat_template.h"

namespace qvl {
namespace {

// The smallest prompt chunk a stall budget shrinks chunks to (one KV page): every chunk
// reads all the weights, so a prompt still advances at a useful rate under a tiny budget.
constexpr int64_t kMinPrefillChunk = 16;
constexpr double kNoLimit = std::numeric_limits<double>::infinity();

// The requests of `active` as the engine's other lines name them, each once (its n
// choices are one request): the front end's ids in request_ids, the engine's numbers of
// those without one in requests; a field is left out when it would be empty.
std::vector<LogField> RequestsOf(const std::vector<std::unique_ptr<Sequence>>& active) {
  std::string ids, numbers;
  std::unordered_set<RequestId> named;
  for (const std::unique_ptr<Sequence>& seq : active) {
    if (!named.insert(seq->id).second) continue;
    const std::string& id = seq->request->request_id;
    std::string& list = id.empty() ? numbers : ids;
    list += StrCat(list.empty() ? "" : ",", id.empty() ? std::to_string(seq->id) : id);
  }
  std::vector<LogField> out;
  if (!ids.empty()) out.emplace_back("request_ids", ids);
  if (!numbers.empty()) out.emplace_back("requests", numbers);
  return out;
}

}  // namespace

class Engine::Impl {
 public:
  Impl(std::unique_ptr<Qwen3VLModel> model, const EngineOptions& options);
  ~Impl();

  RequestId Submit(GenerationRequest request, UpdateSink sink);
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

Engine::Impl::Impl(std::unique_ptr<Qwen3VLModel> model, const EngineOptions& options)
    : model_(std::move(model)),
      options_(options),
      settings_(LoadModelSettings(model_->folder())),
      vocab_(model_->config().text.vocab_size),
      kv_(model_->config().text, model_->options().kv_dtype, options.kv_page_tokens,
          options.kv_cache_bytes),
      images_(options.image_cache_bytes) {
  preparer_ = std::make_unique<RequestPreparer>(
      model_->config(), model_->folder().generation, tokenizer_, settings_.image_params,
      settings_.video_params, options_, &images_, settings_.chat_template);
  eos_ids_ = preparer_->eos_ids();
  logits_.resize(static_cast<size_t>(options_.max_sequences + kMaxDraftTokens) * vocab_);
  never_drafted_ = {model_->config().image_token_id};
  if (model_->config().video_token_id >= 0)
    never_drafted_.push_back(model_->config().video_token_id);
  stats_.kv_pages_total = kv_.pool().num_pages();
  const int64_t kv_tokens = kv_.pool().num_pages() * kv_.page_tokens();
  if (kv_tokens < options_.context_tokens) {
    LogWarn("the KV cache holds ", kv_tokens, " tokens, fewer than the context of ",
            options_.context_tokens, ": longer prompts are refused and answers cut there; ",
            "raise --kv-cache-mb or lower --ctx-size");
  }
  thread_ = std::thread([this] { Run(); });
}

Engine::Impl::~Impl() { Shutdown(0); }

RequestId Engine::Impl::Submit(GenerationRequest request, UpdateSink sink) {
  uint64_t fallback_seed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!accepting_) Fail(ErrorCode::kUnavailable, "the server is shutting down");
    fallback_seed = std::random_device()() ^ (next_id_ * 0x9e3779b97f4a7c15ull);
  }
  auto prepared =
      std::make_shared<const PreparedRequest>(preparer_->Prepare(request, fallback_seed));
  std::shared_ptr<const TokenTable> grammar_tokens =
      prepared->grammar != nullptr ? GrammarTokens() : nullptr;
  // After preparing: the timings add prepared->preprocess_ms to what follows.
  const double submitted = NowSeconds();
  std::lock_guard<std::mutex> lock(mu_);
  if (!accepting_) Fail(ErrorCode::kUnavailable, "the server is shutting down");
  // Requests not started yet beyond the free slots wait; those that will take a free
  // slot (the engine thread may not have seen them yet) do not count against --queue.
  const int64_t not_started = static_cast<int64_t>(incoming_.size()) + stats_.queued;
  const int64_t waiting = not_started - (options_.max_sequences - slots_in_use_);
  if (waiting >= options_.max_queue) {
    Fail(ErrorCode::kUnavailable, "the server is busy: ", waiting,
         " requests are already waiting; retry later");
  }
  const RequestId id = next_id_++;
  auto seq = std::make_unique<Sequence>(id, 0, prepared, std::move(sink), tokenizer_,
                                        std::move(grammar_tokens), vocab_);
  seq->unforked_choices = prepared->choices - 1;
  seq->submitted = submitted;
  incoming_.push_back(std::move(seq));
  wake_.notify_one();
  return id;
}

std::shared_ptr<const TokenTable> Engine::Impl::GrammarTokens() {
  std::call_once(grammar_tokens_once_,
                 [&] { grammar_tokens_ = BuildTokenTable(tokenizer_, vocab_, eos_ids_); });
  return grammar_tokens_;
}

void Engine::Impl::Cancel(RequestId id) {
  std::lock_guard<std::mutex> lock(mu_);
  cancel_requests_.insert(id);
  wake_.notify_one();
}

void Engine::Impl::Shutdown(double grace_seconds) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!thread_.joinable()) return;
    accepting_ = false;
    stop_ = true;
    cancel_all_at_ = NowSeconds() + grace_seconds;
    wake_.notify_one();
  }
  thread_.join();
}

EngineStats Engine::Impl::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  EngineStats s = stats_;
  s.queued += static_cast<int64_t>(incoming_.size());
  return s;
}

void Engine::Impl::Run() {
  pool_ = std::make_unique<ThreadPool>(options_.threads);
  bool idle_hook_due = false;  // work was done since on_idle last ran
  for (;;) {
    bool worked = false;
    try {
      worked = Step();
    } catch (const std::exception& e) {
      // A failure inside a step is a bug; fail the requests involved rather than the
      // server, and keep serving.
      std::vector<LogField> fields = RequestsOf(active_);
      fields.emplace_back("error", e.what());
      LogEvent(LogLevel::kError, "engine step failed", fields);
      for (SequencePtr& s : active_) Finish(*s, FinishReason::kError, e.what());
      RemoveFinished();
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (stop_ && NowSeconds() >= cancel_all_at_) {
      lock.unlock();
      for (SequencePtr& s : waiting_) Finish(*s, FinishReason::kCancelled);
      for (SequencePtr& s : active_) Finish(*s, FinishReason::kCancelled);
      lock.lock();
      std::deque<SequencePtr> never_started = std::move(incoming_);
      incoming_.clear();
      lock.unlock();
      for (SequencePtr& s : never_started) Finish(*s, FinishReason::kCancelled);
      return;
    }
    const bool idle = !worked && incoming_.empty() && cancel_requests_.empty();
    if (stop_ && idle && active_.empty() && waiting_.empty()) return;
    idle_hook_due |= worked;
    if (idle) {
      const bool slept =
          wake_.wait_for(lock, std::chrono::milliseconds(stop_ ? 10 : kIdleHookMs)) ==
          std::cv_status::timeout;
      if (slept && idle_hook_due && options_.on_idle && incoming_.empty()) {
        idle_hook_due = false;
        lock.unlock();
        options_.on_idle();
      }
    }
  }
}

void Engine::Impl::TakeIncoming() {
  std::lock_guard<std::mutex> lock(mu_);
  while (!incoming_.empty()) {
    waiting_.push_back(std::move(incoming_.front()));
    incoming_.pop_front();
  }
  stats_.queued = static_cast<int64_t>(waiting_.size());
}

void Engine::Impl::ApplyCancellations() {
  std::unordered_set<RequestId> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ids.swap(cancel_requests_);
  }
  if (ids.empty()) return;
  for (SequencePtr& s : active_) {
    if (ids.count(s->id)) Finish(*s, FinishReason::kCancelled);
  }
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (ids.count((*it)->id)) {
      Finish(**it, FinishReason::kCancelled);
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
}

bool Engine::Impl::Step() {
  TakeIncoming();
  ApplyCancellations();
  RemoveFinished();
  AdmitWaiting();
  if (active_.empty()) return false;

  // Prompt work first in arrival order: a sequence whose images are encoded gets its
  // prefill before the next image is started, so the first request streams soonest.
  // Decode steps of everyone else run in every step regardless.
  bool prefill_pending = false;
  Sequence* vision_next = nullptr;
  for (SequencePtr& s : active_) {
    if (s->phase == Sequence::Phase::kPrefill) prefill_pending = true;
    if (s->phase == Sequence::Phase::kVision && vision_next == nullptr) vision_next = s.get();
  }
  bool decoding = false;
  for (SequencePtr& s : active_) decoding |= s->phase == Sequence::Phase::kDecode;
  // While answers stream, vision and prompt chunks share one stall budget per step.
  const double deadline = decoding ? NowSeconds() + options_.max_stall_seconds : kNoLimit;
  const bool vision_ran = !prefill_pending && vision_next != nullptr;
  if (vision_ran) RunVision(*vision_next, deadline);
  RunBatch(deadline, vision_ran);
  RemoveFinished();
  return true;
}

void Engine::Impl::AdmitWaiting() {
  while (!waiting_.empty()) {
    Sequence& seq = *waiting_.front();
    if (SlotsInUse() + 1 + seq.unforked_choices > options_.max_sequences) break;
    if (!TryStart(seq)) {
      if (active_.empty()) {
        Finish(seq, FinishReason::kError,
               StrCat("the prompt (", seq.tokens.size(), " tokens) does not fit the KV cache (",
                      kv_.pool().num_pages() * kv_.page_tokens(), " tokens); raise --kv-cache-mb"),
               ErrorCode::kTooLarge);
        waiting_.pop_front();
        continue;
      }
      break;
    }
    active_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
  PublishOccupancy();
}

int64_t Engine::Impl::SlotsInUse() const {
  int64_t slots = 0;
  for (const SequencePtr& seq : active_) slots += seq->finished ? 0 : 1 + seq->unforked_choices;
  return slots;
}

void Engine::Impl::PublishOccupancy() {
  int64_t active = 0, queued = 0;
  for (const SequencePtr& seq : active_) active += seq->finished ? 0 : 1;
  for (const SequencePtr& seq : waiting_) queued += seq->finished ? 0 : 1;
  const int64_t slots = SlotsInUse();
  std::lock_guard<std::mutex> lock(mu_);
  slots_in_use_ = slots;
  stats_.queued = queued;
  stats_.active = active;
  stats_.kv_pages_used = kv_.pool().num_pages() - kv_.pool().free_pages();
  stats_.prefix_cache_pages = kv_.prefix().size();
}

bool Engine::Impl::TryStart(Sequence& seq) {
  if (!kv_.Start(seq)) return false;
  if (seq.started == 0) {
    seq.started = NowSeconds();
    seq.reused = seq.cached;
  }

  // Vision features are needed only for pad tokens that are not cached.
  const std::vector<PreparedImage>& images = seq.request->images;
  seq.vision.assign(images.size(), nullptr);
  // A preempted request keeps the encode times of its first start (its encodings are
  // found in the cache now).
  const std::vector<ImageGrid> earlier = std::move(seq.grids);
  seq.grids.clear();
  seq.next_image = 0;
  for (size_t i = 0; i < images.size(); ++i) {
    ImageGrid grid = images[i].info;
    if (i < earlier.size()) grid.encode_ms = earlier[i].encode_ms;
    const int64_t end = images[i].end_token;
    if (end <= seq.cached) {
      grid.cached = true;
      grid.source = ImageSource::kLocalCache;
    } else {
      const ImageKey key{images[i].content_hash, images[i].grid.h, images[i].grid.w};
      seq.vision[i] = images_.Find(key);
      if (seq.vision[i] != nullptr) {
        grid.source = ImageSource::kLocalCache;
      } else if (images[i].shared_encoding != nullptr) {
        seq.vision[i] = images[i].shared_encoding;
        images_.Insert(key, seq.vision[i]);
        grid.source = ImageSource::kSharedCache;
      }
      grid.cached = seq.vision[i] != nullptr;
      if (grid.source == ImageSource::kLocalCache) {
        std::lock_guard<std::mutex> lock(mu_);
        ++stats_.image_cache_hits;
      }
    }
    seq.grids.push_back(grid);
  }
  seq.images_to_encode = static_cast<int>(std::count_if(
      seq.grids.begin(), seq.grids.end(), [](const ImageGrid& g) { return !g.cached; }));
  seq.images_encoded = 0;
  seq.phase = Sequence::Phase::kVision;
  BuildFeatures(seq);
  ReportProgress(seq);
  return true;
}

void Engine::Impl::BuildFeatures(Sequence& seq) {
  const std::vector<PreparedImage>& images = seq.request->images;
  for (; seq.next_image < images.size(); ++seq.next_image) {
    const PreparedImage& img = images[seq.next_image];
    const bool needed = img.end_token > seq.cached;
    if (needed && seq.vision[seq.next_image] == nullptr) return;  // still to encode
  }
  // Every needed image is encoded: point each pad token at its feature rows.
  const int64_t d = model_->config().text.hidden_size;
  const size_t layers = model_->config().vision.deepstack_visual_indexes.size();
  seq.features = VisualFeatures();
  for (size_t i = 0; i < images.size(); ++i) {
    AppendVisualFeatures(seq.vision[i].get(), images[i].info.tokens, d, layers, &seq.features);
  }
  seq.phase = Sequence::Phase::kPrefill;
  if (seq.vision_done == 0) seq.vision_done = NowSeconds();
}

void Engine::Impl::RunVision(Sequence& seq, double deadline) {
  const PreparedImage& img = seq.request->images[seq.next_image];
  const double start = NowSeconds();
  if (seq.encoding == nullptr) {
    seq.encoding = std::make_unique<VisionEncoding>();
    const GridThw grid = img.grid;
    model_->vision().Begin(img.pixels.data(), std::span<const GridThw>(&grid, 1), *pool_,
                           seq.encoding.get());
  }
  // Vision blocks of one image take about the same time: the last one predicts the next.
  for (double block_start = start; !seq.encoding->done();) {
    model_->vision().Step(seq.encoding.get(), 1, *pool_);
    if (!seq.encoding->done()) ReportProgress(seq);
    const double now = NowSeconds();
    if (now + (now - block_start) > deadline || Interrupted()) break;
    block_start = now;
  }
  const double spent = NowSeconds() - start;
  seq.vision_seconds += spent;
  seq.grids[seq.next_image].encode_ms += spent * 1e3;
  if (!seq.encoding->done()) return;
  auto out = std::make_shared<const VisionOutput>(std::move(seq.encoding->output()));
  seq.encoding.reset();
  const ImageKey key{img.content_hash, img.grid.h, img.grid.w};
  images_.Insert(key, out);
  if (options_.shared_encodings) options_.shared_encodings->Offer(key, out);
  seq.vision[seq.next_image] = std::move(out);
  ++seq.images_encoded;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.images_encoded;
    stats_.vision_seconds += seq.vision_seconds;
  }
  BuildFeatures(seq);
  ReportProgress(seq);
}

void Engine::Impl::ReportProgress(const Sequence& seq) {
  if (!seq.request->report_progress) return;
  GenerationUpdate update;
  update.choice = seq.choice;
  PromptProgress& p = update.progress.emplace();
  p.total = static_cast<int64_t>(seq.request->prompt.size());
  p.cached = seq.reused;
  p.processed = seq.cached;
  if (seq.images_to_encode > 0) {
    // The blocks of one image take about the same time, so the share of them run is the
    // share of its encoding done.
    double current = 0;
    if (seq.encoding != nullptr && !seq.encoding->done()) {
      current = static_cast<double>(seq.encoding->blocks_run()) / model_->vision().depth();
    }
    p.vision = std::min(1.0, (seq.images_encoded + current) / seq.images_to_encode);
  }
  p.elapsed_ms = (NowSeconds() - seq.submitted) * 1e3;
  seq.sink(std::move(update));
}

bool Engine::Impl::Interrupted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !cancel_requests_.empty() || !incoming_.empty() || stop_;
}

void Engine::Impl::Preempt(Sequence& seq) {
  // Recompute later: its KV goes to the prefix cache (likely still there on resume).
  if (LogEnabled(LogLevel::kInfo)) {
    // Named as the front end's logs name it (the server's X-Request-Id), so they join.
    const std::string& request_id = seq.request->request_id;
    LogEvent(LogLevel::kInfo, "KV cache full: preempting a request",
             {request_id.empty() ? LogField("request", static_cast<int64_t>(seq.id))
                                 : LogField("request_id", request_id),
              LogField("tokens", static_cast<int64_t>(seq.tokens.size()))});
  }
  kv_.Release(seq, true);
  seq.cached = 0;
  seq.encoding.reset();
  seq.phase = Sequence::Phase::kQueued;
}

void Engine::Impl::RunBatch(double deadline, bool vision_ran) {
  chunks_.clear();
  chunk_owner_.clear();
  decode_tokens_.clear();
  decode_positions_.clear();
  // Decode steps: each sequence's newest token and, where its history suggests what comes
  // next, a draft verified by the same pass. Reserve storage first: chunks point into it.
  const int64_t per_chunk = 1 + std::min(options_.draft_tokens, kMaxDraftTokens);
  decode_tokens_.reserve(active_.size() * per_chunk);
  decode_positions_.reserve(active_.size() * 3 * per_chunk);
  for (size_t i = 0; i < active_.size(); ++i) {
    Sequence& seq = *active_[i];
    if (seq.phase != Sequence::Phase::kDecode) continue;
    if (!kv_.Ensure(seq, seq.cached + 1)) {
      // Out of KV memory: give it back from the youngest other sequence.
      Sequence* victim = nullptr;
      for (auto it = active_.rbegin(); it != active_.rend(); ++it) {
        if (it->get() != &seq && (*it)->phase != Sequence::Phase::kQueued) {
          victim = it->get();
          break;
        }
      }
      if (victim == nullptr) {
        Finish(seq, FinishReason::kLength);
        continue;
      }
      Preempt(*victim);
      if (!kv_.Ensure(seq, seq.cached + 1)) {
        Finish(seq, FinishReason::kLength);
        continue;
      }
    }
  }
  // Drafted rows ride in the row tiles the step's decode rows already pay for (a matmul
  // reads each weight panel once per tile of rows): decode is bound by reading weights,
  // so they come free, and a step never makes an extra pass over the weights for them.
  int64_t decoding = 0;
  for (const SequencePtr& s : active_) {
    decoding += s->phase == Sequence::Phase::kDecode && !s->finished ? 1 : 0;
  }
  const int64_t tile = std::max<int64_t>(1, RowsPerWeightRead(model_->options().text_weights));
  int64_t draft_room =
      std::min<int64_t>(kMaxDraftTokens, (decoding + tile - 1) / tile * tile - decoding);
  for (SequencePtr& s : active_) {
    Sequence& seq = *s;
    if (seq.phase != Sequence::Phase::kDecode || seq.finished) continue;
    const int64_t slot = seq.cached;
    const size_t first = decode_tokens_.size();
    decode_tokens_.push_back(seq.tokens[slot]);
    // Each token this step decodes is one of the answer's: the draft stays within
    // max_tokens, and within the pages the pool has (nobody is preempted for a draft).
    const int64_t tokens_left = seq.request->output.max_tokens - seq.output.generated();
    int drafted = static_cast<int>(std::clamp<int64_t>(
        std::min<int64_t>(seq.draft_length.next(options_.draft_tokens), tokens_left - 1), 0,
        draft_room));
    if (drafted > 0) {
      decode_tokens_.resize(first + 1 + drafted);
      drafted = Draft(seq, std::span<int32_t>(decode_tokens_).subspan(first + 1, drafted));
      if (drafted > 0 && !kv_.Ensure(seq, slot + 1 + drafted)) drafted = 0;
      decode_tokens_.resize(first + 1 + drafted);
    }
    draft_room -= drafted;
    const int64_t n = 1 + drafted;
    // Text after the prompt: the three M-RoPE rows advance together, one per token.
    const size_t pos = decode_positions_.size();
    for (int r = 0; r < 3; ++r) {
      for (int64_t j = 0; j < n; ++j) decode_positions_.push_back(seq.positions.row(r)[slot] + j);
    }
    DecoderChunk c;
    c.tokens = std::span<const int32_t>(decode_tokens_).subspan(first, n);
    c.positions = {&decode_positions_[pos], &decode_positions_[pos + n],
                   &decode_positions_[pos + 2 * n]};
    c.cache_start = slot;
    c.pages = seq.pages.data();
    c.logit_rows = n;
    chunks_.push_back(c);
    chunk_owner_.push_back(&seq);
  }
  // Prompt chunks, oldest first, within the token budget, which keeps a pause in the
  // streams decoding beside them within the stall budget.
  int64_t budget = options_.prefill_chunk_tokens;
  if (!chunks_.empty() && prefill_tokens_per_second_ > 0) {
    const double fits = prefill_tokens_per_second_ * std::max(0.0, deadline - NowSeconds());
    const int64_t least = std::min(kMinPrefillChunk, budget);
    if (fits < static_cast<double>(budget)) {
      budget = fits < least && vision_ran ? 0 : std::max(least, static_cast<int64_t>(fits));
    }
  }
  const int64_t prompt_budget = budget;
  for (SequencePtr& s : active_) {
    Sequence& seq = *s;
    if (seq.phase != Sequence::Phase::kPrefill || seq.finished || budget <= 0) continue;
    const int64_t n =
        std::min<int64_t>(budget, static_cast<int64_t>(seq.tokens.size()) - seq.cached);
    DecoderChunk c;
    c.tokens = std::span<const int32_t>(seq.tokens).subspan(seq.cached, n);
    c.positions = {seq.positions.row(0).data() + seq.cached,
                   seq.positions.row(1).data() + seq.cached,
                   seq.positions.row(2).data() + seq.cached};
    c.cache_start = seq.cached;
    c.pages = seq.pages.data();
    c.logit_rows = seq.cached + n == static_cast<int64_t>(seq.tokens.size()) ? 1 : 0;
    if (!seq.request->images.empty()) {
      c.visual = &seq.features;
      const ModelConfig& cfg = model_->config();
      c.visual_offset = std::count_if(
          seq.tokens.begin(), seq.tokens.begin() + seq.cached,
          [&](int32_t t) { return t == cfg.image_token_id || t == cfg.video_token_id; });
    }
    chunks_.push_back(c);
    chunk_owner_.push_back(&seq);
    budget -= n;
  }
  if (chunks_.empty()) return;

  const double start = NowSeconds();
  model_->text().Forward(chunks_, kv_.pool(), *pool_, logits_.data());
  if (budget < prompt_budget) {
    prefill_tokens_per_second_ =
        static_cast<double>(prompt_budget - budget) / (NowSeconds() - start);
  }

  int64_t row = 0;
  for (size_t i = 0; i < chunks_.size(); ++i) {
    Sequence& seq = *chunk_owner_[i];
    const DecoderChunk& c = chunks_[i];
    const int64_t n = static_cast<int64_t>(c.tokens.size());
    if (c.logit_rows <= 1) {
      seq.cached += n;
      if (c.logit_rows == 0) ReportProgress(seq);
      if (c.logit_rows == 1) {
        if (seq.request->embed) {
          OnEmbedding(seq, row);
        } else {
          OnLogits(seq, &logits_[row * vocab_]);
        }
        ++row;
      }
      continue;
    }
    // A decode step with a draft: the sampler picks from each row in turn, and the next
    // row's logits hold only while the picked token is the drafted one.
    const int drafted = static_cast<int>(n - 1);
    int accepted = 0;
    seq.cached += 1;
    for (int j = 0; j <= drafted; ++j) {
      OnLogits(seq, &logits_[(row + j) * vocab_]);
      if (seq.finished || j == drafted || seq.tokens.back() != c.tokens[j + 1]) break;
      ++accepted;
      seq.cached += 1;
    }
    row += n;
    seq.draft_length.Record(drafted, accepted);
    seq.drafted += drafted;
    seq.draft_accepted += accepted;
  }
}

int Engine::Impl::Draft(const Sequence& seq, std::span<int32_t> out) const {
  if (seq.constraints.constrained()) {
    const std::string forced = seq.constraints.ForcedBytes(kMaxForcedDraftBytes);
    if (!forced.empty()) {
      const std::vector<int32_t> ids = tokenizer_.Encode(forced);
      const size_t n = std::min(ids.size(), out.size());
      std::copy_n(ids.begin(), n, out.begin());
      return static_cast<int>(n);
    }
  }
  return LookupDraft(seq.tokens, never_drafted_, out);
}

void Engine::Impl::ForkChoices(Sequence& leader, const float* logits) {
  for (int choice = 1; leader.unforked_choices > 0; ++choice, --leader.unforked_choices) {
    std::unique_ptr<Sequence> seq =
        ForkChoice(leader, choice, tokenizer_,
                   leader.constraints.constrained() ? GrammarTokens() : nullptr, vocab_);
    if (!kv_.Share(leader, *seq)) {
      // No page for its own copy of the last partial page: it prefills again later, most
      // of it from the prefix cache once the leader's pages are there.
      seq->cached = 0;
      seq->phase = Sequence::Phase::kQueued;
      waiting_.push_front(std::move(seq));
      continue;
    }
    fork_logits_.assign(logits, logits + vocab_);
    Sequence& forked = *seq;
    active_.push_back(std::move(seq));
    OnLogits(forked, fork_logits_.data());
  }
}

void Engine::Impl::OnLogits(Sequence& seq, float* logits) {
  if (seq.unforked_choices > 0) ForkChoices(seq, logits);
  GenerationUpdate update;
  update.choice = seq.choice;
  int32_t token = 0;
  const FinishReason reason = SampleNextToken(seq, logits, vocab_, &token, &update);
  const double now = NowSeconds();
  if (seq.first_token == 0) seq.first_token = now;
  seq.usage.completion_tokens = seq.output.generated();
  if (reason != FinishReason::kNone) {
    if (!update.text.empty() || !update.tokens.empty()) seq.sink(std::move(update));
    Finish(seq, reason);
    return;
  }
  seq.tokens.push_back(token);
  seq.keys.push_back(TextTokenKey(token));
  seq.positions.AppendText(1);
  seq.phase = Sequence::Phase::kDecode;
  if (!update.text.empty() || !update.tokens.empty()) seq.sink(std::move(update));
}

// An embed request's prompt is through: its last token's final-normed hidden state,
// scaled to unit length, is the whole answer (last-token pooling; see request.h).
void Engine::Impl::OnEmbedding(Sequence& seq, int64_t row) {
  const std::span<const float> hidden = model_->text().FinalNormedRow(row);
  seq.embedding.assign(hidden.begin(), hidden.end());
  ScaleToUnitLength(seq.embedding);
  seq.first_token = NowSeconds();
  Finish(seq, FinishReason::kStop);
}

void Engine::Impl::Finish(Sequence& seq, FinishReason reason, const std::string& error,
                          ErrorCode code) {
  if (seq.finished) return;
  seq.finished = true;
  // Choices not forked yet never will be: they end with their leader.
  for (; seq.unforked_choices > 0; --seq.unforked_choices) {
    GenerationUpdate unstarted = FinalUpdate(seq, reason, NowSeconds());
    unstarted.choice = seq.choice + seq.unforked_choices;
    unstarted.usage.completion_tokens = 0;
    unstarted.usage.reasoning_tokens = 0;
    unstarted.error = error;
    unstarted.error_code = code;
    seq.sink(std::move(unstarted));
  }
  GenerationUpdate update = FinalUpdate(seq, reason, NowSeconds());
  update.error = error;
  update.error_code = code;
  if (reason == FinishReason::kStop || reason == FinishReason::kLength) {
    update.text = seq.output.Flush();
    update.stop = seq.output.matched_stop();
    update.stop_token = seq.output.matched_stop_token();
  }
  update.embedding = std::move(seq.embedding);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.completion_tokens += update.usage.completion_tokens;
    stats_.draft_tokens += seq.drafted;
    stats_.draft_tokens_accepted += seq.draft_accepted;
    // The n choices of a request share its prompt, prefilled once: the request, its
    // prompt and its outcome count with its first choice.
    if (seq.choice == 0) {
      stats_.prompt_tokens += update.usage.prompt_tokens;
      stats_.cached_prompt_tokens += update.usage.cached_tokens;
      if (reason == FinishReason::kCancelled) {
        ++stats_.requests_cancelled;
      } else if (reason == FinishReason::kError) {
        ++stats_.requests_failed;
      } else {
        ++stats_.requests_finished;
      }
    }
  }
  kv_.Release(seq, reason != FinishReason::kError);
  PublishOccupancy();
  seq.sink(std::move(update));
}

void Engine::Impl::RemoveFinished() {
  std::vector<SequencePtr> kept;
  std::deque<SequencePtr> requeue;
  for (SequencePtr& s : active_) {
    if (s->finished) continue;
    if (s->phase == Sequence::Phase::kQueued) {
      requeue.push_back(std::move(s));
    } else {
      kept.push_back(std::move(s));
    }
  }
  active_ = std::move(kept);
  // Preempted sequences go first in line.
  while (!requeue.empty()) {
    waiting_.push_front(std::move(requeue.back()));
    requeue.pop_back();
  }
}

Engine::Engine(std::unique_ptr<Qwen3VLModel> model, const EngineOptions& options)
    : impl_(std::make_unique<Impl>(std::move(model), options)) {}
Engine::~Engine() = default;
RequestId Engine::Submit(GenerationRequest request, UpdateSink sink) {
  return impl_->Submit(std::move(request), std::move(sink));
}
void Engine::Cancel(RequestId id) { impl_->Cancel(id); }
void Engine::Shutdown(double grace_seconds) { impl_->Shutdown(grace_seconds); }
EngineStats Engine::Stats() const { return impl_->Stats(); }
const Qwen3VLModel& Engine::model() const { return impl_->model(); }
const EngineOptions& Engine::options() const { return impl_->options(); }
int64_t Engine::pixels_per_image_token() const {
  return impl_->preparer().pixels_per_image_token();
}
const RequestPreparer& Engine::preparer() const { return impl_->preparer(); }
const Tokenizer& Engine::tokenizer() const { return impl_->tokenizer(); }
int64_t Engine::pixels_per_video_token() const {
  return impl_->preparer().pixels_per_video_token();
}

const char* FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone:
      return "";
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
    case FinishReason::kError:
      return "error";
  }
  return "";
}

}  // namespace qvl
