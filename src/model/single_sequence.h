// One sequence through the text decoder on its own: the prompt in one prefill, then one
// token at a time, with a KV cache of its own. The straight-line run that `qvl bench`,
// `qvl dump` and the golden tests measure and compare (the engine instead batches many
// sequences over a shared cache).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/dtype.h"
#include "base/thread_pool.h"
#include "model/kv_pool.h"
#include "model/mrope.h"
#include "model/text_decoder.h"

namespace qvl {

class SingleSequence {
 public:
  // Room for `capacity` tokens: the prompt and every token Step feeds.
  SingleSequence(TextDecoder& text, DType kv_dtype, int64_t capacity, ThreadPool& pool);

  // Runs the prompt (its image pads take `visual`, which may be null without images)
  // and writes the last token's logits (vocab_size floats).
  void Prefill(std::span<const int32_t> prompt, const MropePositions& positions,
               const VisualFeatures* visual, float* logits, const TensorTap* tap = nullptr);
  // Feeds the next token after the prompt and the tokens fed before; writes its logits.
  // Throws Error(kInternal) beyond the capacity.
  void Step(int32_t token, float* logits);

  int64_t length() const { return length_; }

 private:
  static constexpr int kPageTokens = 16;

  TextDecoder& text_;
  ThreadPool& pool_;
  KvPool kv_;
  std::vector<int32_t> pages_;
  int64_t capacity_;
  int64_t length_ = 0;
  int64_t next_position_ = 0;
};

// The index of the largest of `logits` (the first one on a tie).
int32_t Argmax(std::span<const float> logits);

}  // namespace qvl
