#include "model/single_sequence.h"

#include <algorithm>

#include "base/error.h"

namespace qvl {

SingleSequence::SingleSequence(TextDecoder& text, DType kv_dtype, int64_t capacity,
                               ThreadPool& pool)
    : text_(text),
      pool_(pool),
      kv_(text.config(), kv_dtype, kPageTokens,
          KvPool::PageBytes(text.config(), kv_dtype, kPageTokens) *
              static_cast<size_t>((capacity + kPageTokens - 1) / kPageTokens)),
      capacity_(capacity) {
  for (int64_t slots = 0; slots < capacity; slots += kPageTokens) pages_.push_back(kv_.Allocate());
}

void SingleSequence::Prefill(std::span<const int32_t> prompt, const MropePositions& positions,
                             const VisualFeatures* visual, float* logits, const TensorTap* tap) {
  if (length_ != 0 || static_cast<int64_t>(prompt.size()) > capacity_) {
    Fail(ErrorCode::kInternal, "SingleSequence: prefill of ", prompt.size(), " tokens after ",
         length_, " with room for ", capacity_);
  }
  DecoderChunk chunk;
  chunk.tokens = prompt;
  chunk.positions = {positions.row(0).data(), positions.row(1).data(), positions.row(2).data()};
  chunk.pages = pages_.data();
  chunk.visual = visual;
  chunk.logit_rows = 1;
  text_.Forward(std::span<const DecoderChunk>(&chunk, 1), kv_, pool_, logits, tap);
  length_ = static_cast<int64_t>(prompt.size());
  next_position_ = positions.next();
}

void SingleSequence::Step(int32_t token, float* logits) {
  if (length_ >= capacity_) {
    Fail(ErrorCode::kInternal, "SingleSequence: step beyond its room for ", capacity_, " tokens");
  }
  const auto position = static_cast<int32_t>(next_position_);
  DecoderChunk chunk;
  chunk.tokens = std::span<const int32_t>(&token, 1);
  chunk.positions = {&position, &position, &position};
  chunk.cache_start = length_;
  chunk.pages = pages_.data();
  chunk.logit_rows = 1;
  text_.Forward(std::span<const DecoderChunk>(&chunk, 1), kv_, pool_, logits);
  ++length_;
  ++next_position_;
}

int32_t Argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

}  // namespace qvl
