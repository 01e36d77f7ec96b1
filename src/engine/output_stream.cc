#include "engine/output_stream.h"

#include <algorithm>

#include "engine/sampler.h"

namespace qvl {

OutputStream::OutputStream(const Tokenizer& tokenizer, const OutputLimits& limits)
    : tokenizer_(tokenizer),
      limits_(limits),
      decoder_(tokenizer, /*skip_special=*/true),
      stop_(limits.stop) {}

FinishReason OutputStream::Accept(int32_t token, const float* logits, int64_t vocab,
                                  GenerationUpdate* update) {
  ++generated_;
  if (token == limits_.reasoning_end && reasoning_end_at_ == 0) reasoning_end_at_ = generated_;
  const bool is_eos =
      std::find(limits_.eos_ids.begin(), limits_.eos_ids.end(), token) != limits_.eos_ids.end();
  if (limits_.top_logprobs >= 0 && !(is_eos && !limits_.ignore_eos)) {
    GeneratedToken t;
    t.chosen.id = token;
    t.chosen.text = std::string(tokenizer_.TokenBytes(token));
    TopLogprobs(logits, vocab, token, limits_.top_logprobs, &t.chosen.logprob, &top_);
    for (const auto& [id, lp] : top_)
      t.top.push_back({id, std::string(tokenizer_.TokenBytes(id)), lp});
    update->tokens.push_back(std::move(t));
  }
  if (is_eos && !limits_.ignore_eos) return FinishReason::kStop;
  update->text += stop_.Push(decoder_.Feed(token));
  if (stop_.stopped()) return FinishReason::kStop;
  if (generated_ >= limits_.max_tokens) return FinishReason::kLength;
  return FinishReason::kNone;
}

std::string OutputStream::Flush() {
  if (stop_.stopped()) return {};
  std::string text = stop_.Push(decoder_.Flush());
  if (stop_.stopped()) return text;
  return text + stop_.Flush();
}

}  // namespace qvl
