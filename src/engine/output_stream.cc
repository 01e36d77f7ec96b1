#include "engine/output_stream.h"

#include <algorithm>

#include "engine/sampler.h"

namespace qvl {

std::vector<int32_t> AnswerEndTokens(const OutputLimits& limits) {
  std::vector<int32_t> out = limits.stop_token_ids;
  if (!limits.ignore_eos) out.insert(out.end(), limits.eos_ids.begin(), limits.eos_ids.end());
  return out;
}

GeneratedToken TokenLogprobs(const Tokenizer& tokenizer, const float* logits, int64_t vocab,
                             int32_t token, int n, std::vector<std::pair<int32_t, float>>* top) {
  GeneratedToken t;
  t.chosen.id = token;
  t.chosen.text = std::string(tokenizer.TokenBytes(token));
  TopLogprobs(logits, vocab, token, n, &t.chosen.logprob, top);
  for (const auto& [id, lp] : *top)
    t.top.push_back({id, std::string(tokenizer.TokenBytes(id)), lp});
  return t;
}

OutputStream::OutputStream(const Tokenizer& tokenizer, const OutputLimits& limits)
    : tokenizer_(tokenizer),
      limits_(limits),
      end_tokens_(AnswerEndTokens(limits)),
      decoder_(tokenizer, /*skip_special=*/true),
      stop_(limits.stop, limits.include_stop_str),
      phase_(limits.reasoning_end >= 0 ? Phase::kReasoning : Phase::kReply) {}

bool OutputStream::IsStopToken(int32_t token) const {
  const auto is = [token](const std::vector<int32_t>& ids) {
    return std::find(ids.begin(), ids.end(), token) != ids.end();
  };
  // vLLM checks the end-of-sequence id first: an answer it ends has no stop_reason.
  return is(limits_.stop_token_ids) && (limits_.ignore_eos || !is(limits_.eos_ids));
}

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
  if (generated_ <= limits_.min_tokens) return out.append(text);
  return out + stop_.Push(text);
}

FinishReason OutputStream::Accept(int32_t token, const float* logits, int64_t vocab,
                                  GenerationUpdate* update) {
  ++generated_;
  const bool ends_reasoning = phase_ == Phase::kReasoning && token == limits_.reasoning_end;
  if (ends_reasoning) reasoning_end_at_ = generated_;
  const bool ends = std::find(end_tokens_.begin(), end_tokens_.end(), token) != end_tokens_.end();
  const bool stop_token = ends && IsStopToken(token);
  const bool shown = !ends || (stop_token && limits_.include_stop_str);
  if (limits_.top_logprobs >= 0 && shown) {
    update->tokens.push_back(
        TokenLogprobs(tokenizer_, logits, vocab, token, limits_.top_logprobs, &top_));
  }
  if (ends) {
    if (stop_token) stop_token_ = token;
    // As vLLM checks stop token ids before stop strings, the token's text is not searched
    // for one; kept stops hold nothing back, so it follows all the text shown.
    if (shown) update->text += decoder_.Feed(token);
    return FinishReason::kStop;
  }
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
