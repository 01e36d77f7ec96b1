#include "engine/output_stream.h"

#include <algorithm>

#include "engine/sampler.h"

namespace qvl {

OutputStream::OutputStream(const Tokenizer& tokenizer, const OutputLimits& limits)
    : tokenizer_(tokenizer),
      limits_(limits),
      decoder_(tokenizer, /*skip_special=*/true),
      stop_(limits.stop),
      phase_(limits.reasoning_end >= 0 ? Phase::kReasoning : Phase::kReply) {}

std::string OutputStream::Pass(std::string_view text) {
  if (phase_ == Phase::kReasoning) return std::string(text);
  std::string out;
  if (phase_ == Phase::kReplyStart) {
    const size_t start = std::min(text.find_first_not_of('\n'), text.size());
    out.append(text.substr(0, start));
    text.remove_prefix(start);
    if (text.empty()) return out;
    phase_ = Phase::kReply;
  }
  return out + stop_.Push(text);
}

FinishReason OutputStream::Accept(int32_t token, const float* logits, int64_t vocab,
                                  GenerationUpdate* update) {
  ++generated_;
  const bool ends_reasoning = phase_ == Phase::kReasoning && token == limits_.reasoning_end;
  if (ends_reasoning) reasoning_end_at_ = generated_;
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
  update->text += Pass(decoder_.Feed(token));
  // The tag is the reasoning's last text; what follows is the reply.
  if (ends_reasoning) phase_ = Phase::kReplyStart;
  if (stop_.stopped()) return FinishReason::kStop;
  if (generated_ >= limits_.max_tokens) return FinishReason::kLength;
  return FinishReason::kNone;
}

std::string OutputStream::Flush() {
  if (stop_.stopped()) return {};
  std::string text = Pass(decoder_.Flush());
  if (stop_.stopped()) return text;
  return text + stop_.Flush();
}

}  // namespace qvl
