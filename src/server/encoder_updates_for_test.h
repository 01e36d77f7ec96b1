// The engine updates the encoder tests feed: a piece of answer text with its logprobs,
// a progress report before the first token, and an answer's final update.
#pragma once

#include <cstdint>
#include <string>

#include "engine/request.h"

namespace qvl::testing {

// `text` as one token (id 42, logprob -0.25) with two alternatives, the second a token
// that ends inside a UTF-8 character.
inline GenerationUpdate Text(const std::string& text) {
  GenerationUpdate u;
  u.text = text;
  GeneratedToken t;
  t.chosen = {42, text, -0.25f};
  t.top = {{42, text, -0.25f}, {7, "\xe4\xb8", -2.0f}};
  u.tokens.push_back(t);
  return u;
}

// The end of an answer: 12 prompt tokens (8 of them cached), 2 generated, 3 ms prefill.
inline GenerationUpdate Final(FinishReason reason) {
  GenerationUpdate u;
  u.finished = true;
  u.finish_reason = reason;
  u.usage = {12, 2, 8, 0};
  u.timings.prefill_ms = 3;
  return u;
}

// A progress report before the first token: 80 prompt tokens (16 of them cached),
// `processed` in the KV cache, `vision` of the images' encoding done, 12.5 ms in.
inline GenerationUpdate Progress(int64_t processed, double vision) {
  GenerationUpdate u;
  u.progress = PromptProgress{
      .total = 80, .cached = 16, .processed = processed, .vision = vision, .elapsed_ms = 12.5};
  return u;
}

}  // namespace qvl::testing
