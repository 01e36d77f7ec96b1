// The most text a prompt can hold, from a sound lower bound on its tokens that costs one
// pass over the bytes: tokenizing megabytes of text only to find that it cannot fit the
// context takes seconds on the submitting thread, so such text is refused before.
#pragma once

#include <cstdint>
#include <vector>

#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace qvl {

// NFC normalization, which the tokenizer applies first, shrinks UTF-8 text by at most
// this factor (U+0390 from three code points, 6 bytes -> 2; a Hangul syllable from three
// jamo, 9 -> 3).
inline constexpr int64_t kNfcMaxShrink = 3;
// Qwen3's longest token (128 spaces); only for limits fixed before a model is loaded.
inline constexpr int64_t kQwen3LongestTokenBytes = 128;

// Bytes of the longest token of `tokenizer`.
int64_t LongestTokenBytes(const Tokenizer& tokenizer);

// Every token covers at most longest_token_bytes * kNfcMaxShrink bytes of the text as
// sent, so text over context_tokens times that cannot fit in the context.
int64_t MaxPromptTextBytes(int64_t context_tokens, int64_t longest_token_bytes);

// The bytes of text the chat template inserts from `messages`: text parts, tool call
// names and arguments.
int64_t MessageTextBytes(const std::vector<ChatMessage>& messages);

}  // namespace qvl
