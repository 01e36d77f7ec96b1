// One engine step's work on the engine thread: vision slices, the batched forward pass of
// decode steps and prompt chunks, sampling, choices, and finishing sequences.
#include <algorithm>
#include <limits>
#include <span>

#include "base/log.h"
#include "base/timer.h"
#include "engine/draft_lookup.h"
#include "engine/engine_impl.h"
#include "engine/shared_encoding_store.h"
#include "model/visual_features.h"
#include "ops/norm.h"

namespace qvl {
namespace {

// The smallest prompt chunk a stall budget shrinks chunks to (one KV page): every chunk
// reads all the weights, so a prompt still advances at a useful rate under a tiny budget.
constexpr int64_t kMinPrefillChunk = 16;

}  // namespace

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
  int64_t prompt_logit_rows = kPromptLogprobRows;
  for (SequencePtr& s : active_) {
    Sequence& seq = *s;
    if (seq.phase != Sequence::Phase::kPrefill || seq.finished || budget <= 0) continue;
    int64_t n = std::min<int64_t>(budget, static_cast<int64_t>(seq.tokens.size()) - seq.cached);
    const bool every_row = seq.NeedsPromptLogits();
    if (every_row) {
      n = std::min(n, prompt_logit_rows);
      if (n == 0) continue;
      prompt_logit_rows -= n;
    }
    DecoderChunk c;
    c.tokens = std::span<const int32_t>(seq.tokens).subspan(seq.cached, n);
    c.positions = {seq.positions.row(0).data() + seq.cached,
                   seq.positions.row(1).data() + seq.cached,
                   seq.positions.row(2).data() + seq.cached};
    c.cache_start = seq.cached;
    c.pages = seq.pages.data();
    const bool last = seq.cached + n == static_cast<int64_t>(seq.tokens.size());
    c.logit_rows = every_row ? n : last ? 1 : 0;
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
  // Prompt chunks with a logits row per token need more rows than the buffer was sized for
  // (kPromptLogprobRows at most): it grows the first time they come, so that a server never
  // asked for prompt logprobs does not hold the memory.
  int64_t logit_rows = 0;
  for (const DecoderChunk& c : chunks_) logit_rows += c.logit_rows;
  if (static_cast<size_t>(logit_rows * vocab_) > logits_.size()) {
    logits_.resize(logit_rows * vocab_);
  }

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
    if (seq.phase == Sequence::Phase::kPrefill) {
      if (seq.NeedsPromptLogits()) OnPromptLogits(seq, c, &logits_[row * vocab_]);
      seq.cached += n;
      row += c.logit_rows;
      // The prompt's last row gives its first token (or its embedding).
      if (seq.cached < static_cast<int64_t>(seq.tokens.size())) {
        ReportProgress(seq);
      } else if (seq.request->embed) {
        OnEmbedding(seq, row - 1);
      } else {
        OnLogits(seq, &logits_[(row - 1) * vocab_]);
      }
      continue;
    }
    if (c.logit_rows == 1) {
      seq.cached += 1;
      OnLogits(seq, &logits_[row * vocab_]);
      ++row;
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

void Engine::Impl::OnPromptLogits(Sequence& seq, const DecoderChunk& c, const float* logits) {
  const std::vector<int32_t>& prompt = seq.request->prompt;
  const int64_t first = c.cache_start + static_cast<int64_t>(c.tokens.size()) - c.logit_rows;
  for (int64_t j = 0; j < c.logit_rows; ++j) {
    // Made in order, once: a preempted prompt read again skips those it has.
    const int64_t next = first + j + 1;
    if (next != static_cast<int64_t>(seq.prompt_logprobs.size()) ||
        next >= static_cast<int64_t>(prompt.size())) {
      continue;
    }
    const float* row = logits + j * vocab_;
    seq.prompt_logprobs.push_back(TokenLogprobs(tokenizer_, row, vocab_, prompt[next],
                                                seq.request->prompt_logprobs, &prompt_top_));
    seq.prompt_logprobs.back().rank = RankOf(row, vocab_, prompt[next]);
  }
}

void Engine::Impl::OnLogits(Sequence& seq, float* logits) {
  if (seq.unforked_choices > 0) ForkChoices(seq, logits);
  GenerationUpdate update;
  update.choice = seq.choice;
  int32_t token = 0;
  const FinishReason reason = SampleNextToken(seq, logits, vocab_, &token, &update);
  // The prompt's logprobs go with the first update the client gets about the answer.
  if (!update.text.empty() || !update.tokens.empty()) HandOverPromptLogprobs(seq, &update);
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
  HandOverPromptLogprobs(seq, &update);
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

}  // namespace qvl
