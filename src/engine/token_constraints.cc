#include "engine/token_constraints.h"

namespace qvl {

TokenConstraints::TokenConstraints(std::span<const LogitBias> bias,
                                   std::shared_ptr<const Grammar> grammar,
                                   std::shared_ptr<const TokenTable> tokens, int64_t vocab_rows)
    : bias_(bias.begin(), bias.end()), vocab_rows_(vocab_rows) {
  if (grammar == nullptr) return;
  matcher_.emplace(std::move(grammar), std::move(tokens));
  mask_.resize(static_cast<size_t>((vocab_rows + 31) / 32));
}

void TokenConstraints::Apply(float* logits, int64_t tokens_left) {
  for (const LogitBias& b : bias_) logits[b.token] += b.bias;
  if (!matcher_) return;
  matcher_->FillNextTokenMask(mask_, tokens_left);
  ApplyTokenMask(mask_, logits, vocab_rows_);
}

void TokenConstraints::Accept(int32_t token) {
  if (matcher_) matcher_->Accept(token);
}

std::string TokenConstraints::ForcedBytes(size_t max_bytes) const {
  return matcher_ ? matcher_->ForcedBytes(max_bytes) : std::string();
}

bool TokenConstraints::Terminated() const { return matcher_ && matcher_->IsTerminated(); }

}  // namespace qvl
