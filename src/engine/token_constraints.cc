#include "engine/token_constraints.h"

#include <algorithm>
#include <limits>

#include "text/reasoning_split.h"

namespace qvl {
namespace {

// Tokens whose bytes are 1 .. max_newlines newlines: the chain of '\n' nodes from the
// root of the token trie (a node's children follow it, each skipping to the next by
// subtree_end).
std::vector<std::pair<int32_t, size_t>> NewlineTokens(const TokenTable& table,
                                                      size_t max_newlines) {
  std::vector<std::pair<int32_t, size_t>> out;
  const std::span<const TokenTable::Node> nodes = table.nodes();
  size_t i = 0, end = nodes.size(), newlines = 1;
  while (i < end && newlines <= max_newlines) {
    const TokenTable::Node& node = nodes[i];
    if (node.byte != '\n') {
      i = static_cast<size_t>(node.subtree_end);
      continue;
    }
    for (int k = 0; k < node.token_count; ++k) {
      out.emplace_back(table.token_ids()[static_cast<size_t>(node.tokens_begin + k)], newlines);
    }
    end = static_cast<size_t>(node.subtree_end);
    ++i;
    ++newlines;
  }
  return out;
}

constexpr float kBanned = -std::numeric_limits<float>::infinity();

bool AnyLeft(const float* logits, int64_t rows) {
  return std::any_of(logits, logits + rows, [](float logit) { return logit != kBanned; });
}

}  // namespace

TokenConstraints::TokenConstraints(std::span<const LogitBias> bias,
                                   std::shared_ptr<const Grammar> grammar,
                                   std::shared_ptr<const TokenTable> tokens, int64_t vocab_rows,
                                   int32_t grammar_after, EndHold hold, int64_t reasoning_budget,
                                   const TokenBans* bans)
    : bias_(bias.begin(), bias.end()),
      bans_(bans),
      hold_(std::move(hold)),
      grammar_after_(grammar_after),
      reasoning_budget_(reasoning_budget),
      gate_(grammar_after < 0 ? Gate::kOpen : Gate::kWaiting),
      vocab_rows_(vocab_rows) {
  if (bans_ != nullptr) {
    for (const std::vector<int32_t>& word : bans_->bad_words) {
      recent_limit_ = std::max(recent_limit_, word.size() - 1);
    }
    recent_.reserve(recent_limit_);
  }
  banned_.reserve(hold_.tokens.size() + (bans_ ? bans_->bad_words.size() : 0));
  if (grammar == nullptr) return;
  if (grammar_after >= 0) newline_tokens_ = NewlineTokens(*tokens, kReplySeparator.size());
  matcher_.emplace(std::move(grammar), std::move(tokens));
  mask_.resize(static_cast<size_t>((vocab_rows + 31) / 32));
}

void TokenConstraints::Apply(float* logits, int64_t tokens_left) {
  // The reasoning has run its length: only its end may come, whatever else applies.
  if (gate_ == Gate::kWaiting && reasoning_budget_ >= 0 && accepted_ >= reasoning_budget_) {
    EndReasoning(logits);
    return;
  }
  if (bans_ != nullptr && !bans_->allowed.empty())
    ApplyTokenMask(bans_->allowed, logits, vocab_rows_);
  for (const LogitBias& b : bias_) logits[b.token] += b.bias;
  if (matcher_ && gate_ != Gate::kWaiting) {
    matcher_->FillNextTokenMask(mask_, tokens_left);
    if (gate_ == Gate::kReplyStart) AllowLeadingNewlines(tokens_left);
    ApplyTokenMask(mask_, logits, vocab_rows_);
  }
  if (bans_ != nullptr && !bans_->bad_words.empty()) BanBadWords(logits);
  if (accepted_ < hold_.min_tokens) HoldEnd(logits);
}

void TokenConstraints::BanBadWords(float* logits) {
  banned_.clear();
  for (const std::vector<int32_t>& word : bans_->bad_words) {
    const size_t prefix = word.size() - 1;
    if (prefix <= recent_.size() &&
        std::equal(word.begin(), word.end() - 1, recent_.end() - static_cast<ptrdiff_t>(prefix))) {
      Ban(logits, word.back());
    }
  }
  UnbanIfNoneLeft(logits);
}

void TokenConstraints::Ban(float* logits, int32_t token) {
  if (logits[token] == kBanned) return;
  banned_.emplace_back(token, logits[token]);
  logits[token] = kBanned;
}

void TokenConstraints::UnbanIfNoneLeft(float* logits) const {
  if (banned_.empty() || AnyLeft(logits, vocab_rows_)) return;
  for (const auto& [token, logit] : banned_) logits[token] = logit;
}

void TokenConstraints::EndReasoning(float* logits) const {
  const float end = logits[grammar_after_];
  std::fill(logits, logits + vocab_rows_, kBanned);
  logits[grammar_after_] = end;
}

void TokenConstraints::HoldEnd(float* logits) {
  banned_.clear();
  for (const int32_t token : hold_.tokens) Ban(logits, token);
  // A grammar's mask or the allowed tokens may leave nothing but the end tokens.
  UnbanIfNoneLeft(logits);
}

void TokenConstraints::AllowLeadingNewlines(int64_t tokens_left) {
  // A newline spends a token the grammar may need to close within max_tokens.
  if (matcher_->MinBytesToComplete() > tokens_left - 1) return;
  for (const auto& [token, newlines] : newline_tokens_) {
    if (leading_newlines_ + newlines <= kReplySeparator.size()) {
      mask_[static_cast<size_t>(token) >> 5] |= 1u << (token & 31);
    }
  }
}

size_t TokenConstraints::LeadingNewlines(int32_t token) const {
  for (const auto& [id, newlines] : newline_tokens_) {
    if (id == token) return leading_newlines_ + newlines <= kReplySeparator.size() ? newlines : 0;
  }
  return 0;
}

void TokenConstraints::Accept(int32_t token) {
  ++accepted_;
  if (recent_limit_ > 0) {
    if (recent_.size() == recent_limit_) recent_.erase(recent_.begin());
    recent_.push_back(token);
  }
  switch (gate_) {
    case Gate::kWaiting:
      if (token == grammar_after_) gate_ = Gate::kReplyStart;
      return;
    case Gate::kReplyStart:
      if (const size_t newlines = LeadingNewlines(token); newlines > 0) {
        leading_newlines_ += newlines;
        return;
      }
      gate_ = Gate::kOpen;
      break;
    case Gate::kOpen:
      break;
  }
  if (matcher_) matcher_->Accept(token);
}

std::string TokenConstraints::ForcedBytes(size_t max_bytes) const {
  return matcher_ && gate_ != Gate::kWaiting ? matcher_->ForcedBytes(max_bytes) : std::string();
}

bool TokenConstraints::Terminated() const {
  return matcher_ && gate_ != Gate::kWaiting && matcher_->IsTerminated();
}

}  // namespace qvl
