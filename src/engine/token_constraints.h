// What a request forbids or favours before each token is sampled: OpenAI's logit_bias
// and, for structured output and required tool calls, a grammar whose token mask leaves
// only tokens that keep the answer a valid sentence (grammar/grammar_matcher.h).
// Applied to the raw logits before penalties and temperature, so greedy and sampled
// requests alike only ever pick allowed tokens.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/request.h"
#include "grammar/grammar_matcher.h"

namespace qvl {

class TokenConstraints {
 public:
  // `tokens` may be null when `grammar` is (no constrained decoding).
  TokenConstraints(std::span<const LogitBias> bias, std::shared_ptr<const Grammar> grammar,
                   std::shared_ptr<const TokenTable> tokens, int64_t vocab_rows);

  // Biases and masks `logits` for the next token, of which the answer may still have
  // `tokens_left` (this one included). The mask of an unfinished grammar is never empty
  // (GrammarMatcher::FillNextTokenMask), and a finished one ends the answer first.
  void Apply(float* logits, int64_t tokens_left);
  // Moves the grammar past the sampled token.
  void Accept(int32_t token);
  // The grammar is complete and nothing may follow: the answer is done.
  bool Terminated() const;
  bool constrained() const { return matcher_.has_value(); }
  // What the grammar fixes next (GrammarMatcher::ForcedBytes); empty without one.
  std::string ForcedBytes(size_t max_bytes) const;

 private:
  std::vector<LogitBias> bias_;
  std::optional<GrammarMatcher> matcher_;
  std::vector<uint32_t> mask_;  // one bit per logits row
  int64_t vocab_rows_;
};

}  // namespace qvl
