#include "grammar/grammar_matcher.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "grammar/grammar_automaton.h"

namespace qvl {
namespace grammar {
namespace {

// A runtime past this size is replaced when the next matcher starts (running matchers
// keep theirs), so a long-lived grammar does not grow without bound.
constexpr size_t kRuntimeReplaceBytes = size_t{256} << 20;
// The mask cache is dropped when it grows past this.
constexpr size_t kMaskCacheBytes = size_t{64} << 20;

// Tokens that leave the same shortest completion, as a bitmap when that is smaller.
struct TokenGroup {
  int32_t distance = 0;
  std::vector<int32_t> ids;
  std::vector<uint32_t> bitmap;

  size_t Bytes() const { return ids.size() * sizeof(int32_t) + bitmap.size() * sizeof(uint32_t); }
  void OrInto(std::span<uint32_t> mask) const {
    if (!bitmap.empty()) {
      for (size_t w = 0; w < bitmap.size(); ++w) mask[w] |= bitmap[w];
    } else {
      for (int32_t id : ids) mask[id >> 5] |= uint32_t{1} << (id & 31);
    }
  }
};

struct MaskEntry {
  std::vector<TokenGroup> groups;  // by distance, ascending
};

}  // namespace

struct MatchRuntime {
  MatchRuntime(const Grammar& grammar, std::shared_ptr<const TokenTable> table)
      : automaton(grammar), tokens(std::move(table)), state_at_depth(tokens->max_depth() + 1) {}

  const MaskEntry& Mask(int32_t state) {
    const auto it = masks.find(state);
    if (it != masks.end()) return it->second;
    if (mask_bytes > kMaskCacheBytes) {
      masks.clear();
      mask_bytes = 0;
    }
    MaskEntry entry = Walk(state);
    for (const TokenGroup& group : entry.groups) mask_bytes += group.Bytes() + sizeof(group);
    return masks.emplace(state, std::move(entry)).first->second;
  }

  // One pass over the trie: a subtree is skipped as soon as its prefix kills every stack.
  MaskEntry Walk(int32_t state) {
    for (TokenGroup& group : scratch) group.ids.clear();
    size_t used = 0;
    size_t last = 0;
    const std::span<const TokenTable::Node> nodes = tokens->nodes();
    const std::span<const int32_t> token_ids = tokens->token_ids();
    state_at_depth[0] = state;
    for (size_t i = 0; i < nodes.size();) {
      const TokenTable::Node& node = nodes[i];
      const int32_t next = automaton.Step(state_at_depth[node.depth - 1], node.byte);
      if (next == GrammarAutomaton::kDead) {
        i = node.subtree_end;
        continue;
      }
      state_at_depth[node.depth] = next;
      const int32_t begin = node.tokens_begin, end = tokens->TokensEnd(i);
      if (begin != end) {
        const int32_t distance = automaton.Distance(next);
        if (used == 0 || scratch[last].distance != distance) {
          last = 0;
          while (last < used && scratch[last].distance != distance) ++last;
          if (last == used) {
            if (used == scratch.size()) scratch.emplace_back();
            scratch[used].distance = distance;
            ++used;
          }
        }
        scratch[last].ids.insert(scratch[last].ids.end(), token_ids.begin() + begin,
                                 token_ids.begin() + end);
      }
      ++i;
    }
    MaskEntry entry;
    const size_t words = tokens->mask_words();
    for (size_t g = 0; g < used; ++g) {
      TokenGroup group;
      group.distance = scratch[g].distance;
      if (scratch[g].ids.size() > words) {
        group.bitmap.assign(words, 0);
        for (int32_t id : scratch[g].ids) group.bitmap[id >> 5] |= uint32_t{1} << (id & 31);
      } else {
        group.ids = scratch[g].ids;
      }
      entry.groups.push_back(std::move(group));
    }
    std::sort(entry.groups.begin(), entry.groups.end(),
              [](const TokenGroup& a, const TokenGroup& b) { return a.distance < b.distance; });
    return entry;
  }

  size_t MemoryBytes() const { return automaton.MemoryBytes() + mask_bytes; }

  std::mutex mutex;
  GrammarAutomaton automaton;
  std::shared_ptr<const TokenTable> tokens;
  std::unordered_map<int32_t, MaskEntry> masks;
  size_t mask_bytes = 0;
  std::vector<int32_t> state_at_depth;
  std::vector<TokenGroup> scratch;
};

}  // namespace grammar

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar,
                               std::shared_ptr<const TokenTable> tokens)
    : grammar_(std::move(grammar)) {
  {
    std::lock_guard<std::mutex> lock(grammar_->runtime_mutex);
    auto runtime = std::static_pointer_cast<grammar::MatchRuntime>(grammar_->runtime);
    bool reuse = false;
    if (runtime != nullptr && runtime->tokens == tokens) {
      std::lock_guard<std::mutex> runtime_lock(runtime->mutex);
      reuse = runtime->MemoryBytes() <= grammar::kRuntimeReplaceBytes;
    }
    if (!reuse) {
      runtime = std::make_shared<grammar::MatchRuntime>(*grammar_, std::move(tokens));
      grammar_->runtime = runtime;
    }
    runtime_ = std::move(runtime);
  }
  state_ = runtime_->automaton.start();
}

void GrammarMatcher::FillNextTokenMask(std::span<uint32_t> mask, int64_t tokens_left) {
  std::fill(mask.begin(), mask.end(), 0);
  if (ended_) return;
  std::lock_guard<std::mutex> lock(runtime_->mutex);
  const grammar::MaskEntry& entry = runtime_->Mask(state_);
  const int64_t budget = tokens_left - 1;
  bool any = false;
  for (const grammar::TokenGroup& group : entry.groups) {
    if (group.distance > budget) break;
    group.OrInto(mask);
    any = true;
  }
  const bool complete = runtime_->automaton.IsComplete(state_);
  if (!any && !complete && !entry.groups.empty()) entry.groups.front().OrInto(mask);
  if (complete) {
    for (int32_t id : runtime_->tokens->eos_ids()) mask[id >> 5] |= uint32_t{1} << (id & 31);
  }
}

bool GrammarMatcher::Accept(int32_t token) {
  if (ended_) return false;
  std::lock_guard<std::mutex> lock(runtime_->mutex);
  if (runtime_->tokens->IsEos(token)) {
    if (!runtime_->automaton.IsComplete(state_)) return false;
    ended_ = true;
    return true;
  }
  const std::string_view bytes = runtime_->tokens->Bytes(token);
  if (bytes.empty()) return false;
  int32_t state = state_;
  for (char c : bytes) {
    state = runtime_->automaton.Step(state, static_cast<uint8_t>(c));
    if (state == grammar::GrammarAutomaton::kDead) return false;
  }
  state_ = state;
  return true;
}

bool GrammarMatcher::AcceptBytes(std::string_view bytes) {
  if (ended_) return bytes.empty();
  std::lock_guard<std::mutex> lock(runtime_->mutex);
  int32_t state = state_;
  for (char c : bytes) {
    state = runtime_->automaton.Step(state, static_cast<uint8_t>(c));
    if (state == grammar::GrammarAutomaton::kDead) return false;
  }
  state_ = state;
  return true;
}

bool GrammarMatcher::IsComplete() const {
  std::lock_guard<std::mutex> lock(runtime_->mutex);
  return ended_ || runtime_->automaton.IsComplete(state_);
}

bool GrammarMatcher::IsTerminated() const {
  std::lock_guard<std::mutex> lock(runtime_->mutex);
  return ended_ || runtime_->automaton.IsTerminated(state_);
}

int64_t GrammarMatcher::MinBytesToComplete() const {
  std::lock_guard<std::mutex> lock(runtime_->mutex);
  return ended_ ? 0 : runtime_->automaton.Distance(state_);
}

void ApplyTokenMask(std::span<const uint32_t> mask, float* logits, int64_t vocab_rows) {
  constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();
  for (int64_t w = 0; w * 32 < vocab_rows; ++w) {
    const uint32_t word = mask[w];
    if (word == ~uint32_t{0}) continue;
    const int64_t end = std::min<int64_t>(32, vocab_rows - w * 32);
    for (int64_t b = 0; b < end; ++b) {
      if (!(word >> b & 1)) logits[w * 32 + b] = kMinusInfinity;
    }
  }
}

}  // namespace qvl
