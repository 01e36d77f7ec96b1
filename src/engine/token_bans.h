// vLLM's allowed_token_ids and bad_words as the token ids TokenConstraints bans before
// each token, checked against the vocabulary before any engine work.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/request.h"
#include "text/tokenizer.h"

namespace qvl {

struct TokenBans {
  // One bit per logits row, set for an allowed token; empty: every token is.
  std::vector<uint32_t> allowed;
  // Token sequences, none empty: where the answer's tokens end with all but a sequence's
  // last token, that token is banned.
  std::vector<std::vector<int32_t>> bad_words;
};

// The bans of `request` over `vocab` logits rows. allowed_token_ids: each id in [0, vocab)
// (FieldError at "allowed_token_ids[i]"), and no grammar beside them (the two masks may
// leave nothing). bad_words are tokenized as vLLM's SamplingParams does: each word with
// its leading whitespace removed, and again after a space when that gives as many tokens
// starting with another one (the word inside a sentence); an empty word, more than
// kMaxBadWordSequences sequences or kMaxBadWordTokens tokens is a FieldError naming
// bad_words.
TokenBans PrepareTokenBans(const GenerationRequest& request, const Tokenizer& tokenizer,
                           int64_t vocab);

}  // namespace qvl
