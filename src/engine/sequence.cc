#include "engine/sequence.h"

#include <limits>

namespace qvl {
namespace {

SamplerConfig ChoiceSampling(SamplerConfig config, int choice) {
  config.seed += static_cast<uint64_t>(choice);
  return config;
}

}  // namespace

Sequence::Sequence(RequestId id, int choice, std::shared_ptr<const PreparedRequest> req,
                   UpdateSink sink, const Tokenizer& tokenizer,
                   std::shared_ptr<const TokenTable> token_table, int64_t vocab)
    : id(id),
      choice(choice),
      request(std::move(req)),
      sink(std::move(sink)),
      sampler(ChoiceSampling(request->sampling, choice), vocab),
      constraints(request->logit_bias, request->grammar, std::move(token_table), vocab,
                  request->output.reasoning_end,
                  {AnswerEndTokens(request->output), request->output.min_tokens},
                  request->output.reasoning_budget, &request->bans),
      output(tokenizer, request->output) {
  tokens = request->prompt;
  keys = request->keys;
  positions = request->positions;
  sampler.AddPromptTokens(tokens);
  if (choice == 0 && request->prompt_logprobs >= 0) {
    prompt_logprobs_due = true;
    prompt_logprobs.reserve(tokens.size());
    // The first token is predicted by nothing before it.
    GeneratedToken first;
    first.chosen.id = tokens[0];
    first.chosen.text = std::string(tokenizer.TokenBytes(tokens[0]));
    first.chosen.logprob = std::numeric_limits<float>::quiet_NaN();
    prompt_logprobs.push_back(std::move(first));
  }
}

std::unique_ptr<Sequence> ForkChoice(const Sequence& leader, int choice, const Tokenizer& tokenizer,
                                     std::shared_ptr<const TokenTable> token_table, int64_t vocab) {
  auto seq = std::make_unique<Sequence>(leader.id, choice, leader.request, leader.sink, tokenizer,
                                        std::move(token_table), vocab);
  seq->phase = leader.phase;
  seq->cached = leader.cached;
  seq->reused = leader.reused;
  seq->vision = leader.vision;
  seq->next_image = leader.next_image;
  seq->features = leader.features;
  seq->submitted = leader.submitted;
  seq->started = leader.started;
  seq->vision_done = leader.vision_done;
  seq->vision_seconds = leader.vision_seconds;
  seq->grids = leader.grids;
  return seq;
}

FinishReason SampleNextToken(Sequence& seq, float* logits, int64_t vocab, int32_t* token,
                             GenerationUpdate* update) {
  // Logprobs describe the model's distribution, so they are taken before constraints,
  // penalties and temperature change it.
  const bool logprobs = seq.request->output.top_logprobs >= 0;
  if (logprobs) seq.raw_logits.assign(logits, logits + vocab);
  const int64_t tokens_left = seq.request->output.max_tokens - seq.output.generated();
  seq.constraints.Apply(logits, tokens_left);
  *token = seq.sampler.Sample(logits);
  seq.sampler.Accept(*token);
  seq.constraints.Accept(*token);
  FinishReason reason =
      seq.output.Accept(*token, logprobs ? seq.raw_logits.data() : logits, vocab, update);
  // A grammar that is complete with nothing allowed after it ends the answer, also on its
  // last allowed token: the answer is whole, not cut.
  if ((reason == FinishReason::kNone || reason == FinishReason::kLength) &&
      seq.constraints.Terminated()) {
    reason = FinishReason::kStop;
  }
  return reason;
}

void HandOverPromptLogprobs(Sequence& seq, GenerationUpdate* update) {
  if (!seq.prompt_logprobs_due) return;
  if (!seq.NeedsPromptLogits()) update->prompt_tokens = std::move(seq.prompt_logprobs);
  seq.prompt_logprobs_due = false;
}

GenerationUpdate FinalUpdate(const Sequence& seq, FinishReason reason, double now) {
  GenerationUpdate update;
  update.choice = seq.choice;
  update.finished = true;
  update.finish_reason = reason;
  const PreparedRequest& request = *seq.request;
  update.usage.prompt_tokens = static_cast<int64_t>(request.prompt.size());
  update.usage.completion_tokens = seq.output.generated();
  update.usage.reasoning_tokens = seq.output.reasoning();
  update.usage.cached_tokens = seq.reused;
  Timings& t = update.timings;
  t.preprocess_ms = request.preprocess_ms;
  if (seq.started > 0) t.queue_ms = (seq.started - seq.submitted) * 1e3;
  t.vision_ms = seq.vision_seconds * 1e3;
  if (seq.first_token > 0) {
    const double prefill_start = seq.vision_done > 0 ? seq.vision_done : seq.started;
    t.prefill_ms = (seq.first_token - prefill_start) * 1e3;
    t.ttft_ms = (seq.first_token - seq.submitted) * 1e3 + request.preprocess_ms;
    t.decode_ms = (now - seq.first_token) * 1e3;
    const int64_t prefilled = update.usage.prompt_tokens - seq.reused;
    if (t.prefill_ms > 0) t.prefill_tokens_per_s = prefilled / (t.prefill_ms / 1e3);
    if (t.decode_ms > 0 && update.usage.completion_tokens > 1) {
      t.decode_tokens_per_s = (update.usage.completion_tokens - 1) / (t.decode_ms / 1e3);
    }
  }
  t.total_ms = (now - seq.submitted) * 1e3 + request.preprocess_ms;
  t.draft_tokens = seq.drafted;
  t.draft_tokens_accepted = seq.draft_accepted;
  const std::vector<ImageGrid>* grids = &seq.grids;
  std::vector<ImageGrid> prepared;
  if (seq.grids.empty()) {
    for (const PreparedImage& img : request.images) prepared.push_back(img.info);
    grids = &prepared;
  }
  for (const ImageGrid& g : *grids) (g.frames > 0 ? t.videos : t.images).push_back(g);
  return update;
}

}  // namespace qvl
