// What a request forbids or favours before each token is sampled: OpenAI's logit_bias,
// vLLM's allowed_token_ids and bad_words (TokenBans), vLLM's min_tokens (the tokens that
// end the answer held back until it is that long) and,
// for structured output and required tool calls, a grammar whose token mask leaves only
// tokens that keep the answer a valid sentence (grammar/grammar_matcher.h).
// Applied to the raw logits before penalties and temperature, so greedy and sampled
// requests alike only ever pick allowed tokens. On a Thinking model the grammar binds the
// reply, not the reasoning before it (as vLLM's reasoning parsers have it): it starts
// after the "</think>" token, once the newlines the template puts there have come. A
// reasoning budget forces that token once the reasoning has run its length.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/request.h"
#include "engine/token_bans.h"
#include "grammar/grammar_matcher.h"

namespace qvl {

// vLLM's min_tokens: `tokens` (AnswerEndTokens) cannot be sampled while the answer has
// fewer than `min_tokens` tokens.
struct EndHold {
  std::vector<int32_t> tokens;
  int64_t min_tokens = 0;
};

class TokenConstraints {
 public:
  // `tokens` may be null when `grammar` is (no constrained decoding). `grammar_after`
  // (-1: none) is a token that must come before the grammar applies: until it does, the
  // answer is free text; right after it, up to kReplySeparator's newlines may precede the
  // grammar's first byte. Where the grammar allows nothing but `hold`'s tokens (its
  // sentence is complete and the rest of max_tokens leaves no room for more), they stay
  // allowed: the grammar's end comes before min_tokens. `reasoning_budget` (-1: none):
  // after that many tokens without `grammar_after`, it is the only token allowed. `bans`
  // (null: none) outlives this; a bad word's token stays where banning it would leave no
  // token at all (the grammar's only way on, the only allowed token).
  TokenConstraints(std::span<const LogitBias> bias, std::shared_ptr<const Grammar> grammar,
                   std::shared_ptr<const TokenTable> tokens, int64_t vocab_rows,
                   int32_t grammar_after = -1, EndHold hold = {}, int64_t reasoning_budget = -1,
                   const TokenBans* bans = nullptr);

  // Biases and masks `logits` for the next token, of which the answer may still have
  // `tokens_left` (this one included). The mask of an unfinished grammar is never empty
  // (GrammarMatcher::FillNextTokenMask), and a finished one ends the answer first.
  void Apply(float* logits, int64_t tokens_left);
  // Counts the sampled token and moves the grammar past it.
  void Accept(int32_t token);
  // The grammar is complete and nothing may follow: the answer is done.
  bool Terminated() const;
  bool constrained() const { return matcher_.has_value(); }
  // What the grammar fixes next (GrammarMatcher::ForcedBytes); empty without one and
  // before grammar_after.
  std::string ForcedBytes(size_t max_bytes) const;

 private:
  enum class Gate { kWaiting, kReplyStart, kOpen };
  // Adds to mask_ the newline-only tokens that still fit before the grammar's first byte.
  void AllowLeadingNewlines(int64_t tokens_left);
  // The bytes of `token` when it is a newline-only token that may lead the reply, else 0.
  size_t LeadingNewlines(int32_t token) const;
  // Bans hold_'s tokens in `logits` unless nothing else is left.
  void HoldEnd(float* logits);
  // Bans the last token of each bad word the answer's tokens end with the rest of, unless
  // nothing else is left.
  void BanBadWords(float* logits);
  // Bans `token`, remembering its logit in banned_.
  void Ban(float* logits, int32_t token);
  // Restores the logits of banned_ when no token is left.
  void UnbanIfNoneLeft(float* logits) const;
  // Leaves grammar_after_ the only token allowed in `logits`, with the model's own logit
  // (neither bias nor min_tokens' hold applies: a stop token id may be "</think>").
  void EndReasoning(float* logits) const;

  std::vector<LogitBias> bias_;
  const TokenBans* bans_;
  // The answer's latest tokens, as many as the longest bad word's prefix.
  std::vector<int32_t> recent_;
  size_t recent_limit_ = 0;
  std::vector<std::pair<int32_t, float>> banned_;  // the bans of one HoldEnd or BanBadWords
  EndHold hold_;
  int64_t accepted_ = 0;  // tokens of the answer so far
  std::optional<GrammarMatcher> matcher_;
  int32_t grammar_after_;
  int64_t reasoning_budget_;
  Gate gate_;
  // Tokens spelling 1 .. kReplySeparator.size() newlines, with that count.
  std::vector<std::pair<int32_t, size_t>> newline_tokens_;
  size_t leading_newlines_ = 0;  // taken in kReplyStart
  std::vector<uint32_t> mask_;   // one bit per logits row
  int64_t vocab_rows_;
};

}  // namespace qvl
