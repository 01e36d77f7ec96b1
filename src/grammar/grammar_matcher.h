// One request's position in a grammar, and the mask of tokens that may come next.
//
// Masks come from one depth-first pass over the token trie (token_table.h) driven by the
// grammar's lazily built DFA (grammar_automaton.h), and are cached per DFA state, grouped
// by the shortest completion each token leaves, so that the same state asked again (the
// inside of a string, token after token) costs a copy even when tokens_left is tight.
// Every matcher of one grammar and token table shares that runtime (under a mutex).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "grammar/grammar.h"
#include "grammar/token_table.h"

namespace qvl {

namespace grammar {
struct MatchRuntime;
}  // namespace grammar

class GrammarMatcher {
 public:
  GrammarMatcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTable> tokens);

  // Bit i of `mask` ((vocab_rows + 31) / 32 words) = token i may come next. `tokens_left`
  // counts the tokens the answer may still have, this one included: a token is allowed
  // only if the shortest completion after it fits in tokens_left - 1 tokens (one byte per
  // token at worst), so a constrained answer always closes by max_tokens when it can. If
  // no token fits (the budget was already too small), the tokens that leave the shortest
  // completion are allowed. Eos ids are allowed exactly when the text is complete; special
  // tokens never. Throws Error(kInternal) for a mask shorter than the token table's.
  // When IsTerminated and the table has no eos id, nothing is allowed: stop there.
  void FillNextTokenMask(std::span<uint32_t> mask, int64_t tokens_left);
  // Advances by a token; false (state unchanged) if the grammar does not allow it. An eos
  // id is accepted only when complete, and nothing is accepted after it.
  bool Accept(int32_t token);
  // Advances by raw bytes (a forced prefix, a test); false (state unchanged) if they do
  // not continue a sentence of the grammar.
  bool AcceptBytes(std::string_view bytes);

  bool IsComplete() const;    // the bytes so far are a whole sentence of the grammar
  bool IsTerminated() const;  // complete and no further byte can follow
  // Fewest bytes that complete a sentence from here.
  int64_t MinBytesToComplete() const;
  // The bytes every continuation starts with (a JSON key the schema fixes, the
  // punctuation around it), up to `max_bytes`: empty where the text could end or more than
  // one byte may follow.
  std::string ForcedBytes(size_t max_bytes) const;

 private:
  std::shared_ptr<const Grammar> grammar_;  // outlives runtime_, which refers to it
  std::shared_ptr<grammar::MatchRuntime> runtime_;
  int32_t state_;
  bool ended_ = false;  // an eos was accepted
};

// Sets logits of disallowed tokens to -infinity (rows past the mask's end included).
void ApplyTokenMask(std::span<const uint32_t> mask, float* logits, int64_t vocab_rows);

}  // namespace qvl
