#include "engine/engine.h"

#include <algorithm>
#include <limits>
#include <random>

#include "base/log.h"
#include "base/timer.h"
#include "engine/engine_impl.h"
#include "engine/shared_encoding_store.h"

namespace qvl {
namespace {

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
            "raise --kv-cache-mb or lower --ctx-size",
            model_->options().kv_dtype == DType::kI8
                ? ""
                : " (or --kv-cache-type q8: 1.78 times the tokens)");
  }
  thread_ = std::thread([this] { Run(); });
}

Engine::Impl::~Impl() { Shutdown(0); }

RequestId Engine::Impl::Submit(GenerationRequest request, UpdateSink sink) {
  std::vector<GenerationRequest> one;
  one.push_back(std::move(request));
  std::vector<UpdateSink> sinks;
  sinks.push_back(std::move(sink));
  return SubmitAll(std::move(one), std::move(sinks)).front();
}

std::vector<RequestId> Engine::Impl::SubmitAll(std::vector<GenerationRequest> requests,
                                               std::vector<UpdateSink> sinks) {
  RequestId first_id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!accepting_) Fail(ErrorCode::kUnavailable, "the server is shutting down");
    first_id = next_id_;
  }
  std::vector<std::shared_ptr<const PreparedRequest>> prepared;
  std::vector<std::shared_ptr<const TokenTable>> grammar_tokens;
  for (size_t i = 0; i < requests.size(); ++i) {
    const uint64_t fallback_seed =
        std::random_device()() ^ ((first_id + i) * 0x9e3779b97f4a7c15ull);
    prepared.push_back(
        std::make_shared<const PreparedRequest>(preparer_->Prepare(requests[i], fallback_seed)));
    grammar_tokens.push_back(prepared.back()->grammar != nullptr ? GrammarTokens() : nullptr);
  }
  // After preparing: the timings add prepared->preprocess_ms to what follows.
  const double submitted = NowSeconds();
  std::lock_guard<std::mutex> lock(mu_);
  if (!accepting_) Fail(ErrorCode::kUnavailable, "the server is shutting down");
  // Requests not started yet beyond the free slots wait; those that will take a free
  // slot (the engine thread may not have seen them yet) do not count against --queue.
  // The inputs of one request are one request here, which came when this many waited.
  const int64_t not_started = static_cast<int64_t>(incoming_.size()) + stats_.queued;
  const int64_t waiting = not_started - (options_.max_sequences - slots_in_use_);
  if (waiting >= options_.max_queue) {
    Fail(ErrorCode::kUnavailable, "the server is busy: ", waiting,
         " requests are already waiting; retry later");
  }
  std::vector<RequestId> ids;
  for (size_t i = 0; i < prepared.size(); ++i) {
    const RequestId id = next_id_++;
    auto seq = std::make_unique<Sequence>(id, 0, prepared[i], std::move(sinks[i]), tokenizer_,
                                          std::move(grammar_tokens[i]), vocab_);
    seq->unforked_choices = prepared[i]->choices - 1;
    seq->submitted = submitted;
    incoming_.push_back(std::move(seq));
    ids.push_back(id);
  }
  wake_.notify_one();
  return ids;
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

Engine::Engine(std::unique_ptr<Qwen3VLModel> model, const EngineOptions& options)
    : impl_(std::make_unique<Impl>(std::move(model), options)) {}
Engine::~Engine() = default;
RequestId Engine::Submit(GenerationRequest request, UpdateSink sink) {
  return impl_->Submit(std::move(request), std::move(sink));
}
std::vector<RequestId> Engine::SubmitAll(std::vector<GenerationRequest> requests,
                                         std::vector<UpdateSink> sinks) {
  return impl_->SubmitAll(std::move(requests), std::move(sinks));
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
