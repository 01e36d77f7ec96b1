#include "grammar/grammar_matcher.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "grammar/grammar_automaton.h"

namespace qvl {
namespace grammar {
namespace {

// A runtime past this size is replaced when the next matcher starts (running matchers
// keep theirs), so a long-lived grammar does not grow without bound.
constexpr size_t kRuntimeReplaceBytes = size_t{96} << 20;
// The mask cache is dropped when it grows past this.
constexpr size_t kMaskCacheBytes = size_t{32} << 20;

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
  // For a local state: trie nodes where a stack returned into the context; their
  // subtrees are walked again from the full state.
  std::vector<int32_t> popped_nodes;

  size_t Bytes() const {
    size_t total = popped_nodes.size() * sizeof(int32_t);
    for (const TokenGroup& group : groups) total += group.Bytes() + sizeof(group);
    return total;
  }
};

// Tokens collected during walks, grouped by distance.
class GroupCollector {
 public:
  explicit GroupCollector(size_t words) : words_(words) {}

  void Clear() {
    for (size_t g = 0; g < used_; ++g) {
      groups_[g].ids.clear();
      groups_[g].bitmap.clear();
    }
    used_ = 0;
  }
  void Add(int32_t distance, std::span<const int32_t> ids) {
    if (used_ != 0 && groups_[last_].distance == distance && !groups_[last_].bitmap.empty()) {
      uint32_t* bits = groups_[last_].bitmap.data();
      for (int32_t id : ids) bits[id >> 5] |= uint32_t{1} << (id & 31);
      return;
    }
    AddSlow(distance, ids);
  }

  void AddSlow(int32_t distance, std::span<const int32_t> ids) {
    if (used_ == 0 || groups_[last_].distance != distance) {
      last_ = 0;
      while (last_ < used_ && groups_[last_].distance != distance) ++last_;
      if (last_ == used_) {
        if (used_ == groups_.size()) groups_.emplace_back();
        groups_[used_].distance = distance;
        ++used_;
      }
    }
    TokenGroup& group = groups_[last_];
    if (!group.bitmap.empty()) {
      for (int32_t id : ids) group.bitmap[id >> 5] |= uint32_t{1} << (id & 31);
      return;
    }
    group.ids.insert(group.ids.end(), ids.begin(), ids.end());
    // Past one id per mask word a bitmap is smaller: switch to setting bits.
    if (group.ids.size() > words_) {
      group.bitmap.assign(words_, 0);
      for (int32_t id : group.ids) group.bitmap[id >> 5] |= uint32_t{1} << (id & 31);
      group.ids.clear();
    }
  }
  // Adds `group` shifted by `offset`.
  void Add(const TokenGroup& group, int32_t offset) {
    const int32_t distance = static_cast<int32_t>(
        std::min<int64_t>(int64_t{group.distance} + offset, std::numeric_limits<int32_t>::max()));
    if (group.bitmap.empty()) {
      Add(distance, group.ids);
      return;
    }
    Add(distance, {});
    TokenGroup& mine = groups_[last_];
    if (mine.bitmap.empty()) {
      mine.bitmap = group.bitmap;
      for (int32_t id : mine.ids) mine.bitmap[id >> 5] |= uint32_t{1} << (id & 31);
      mine.ids.clear();
      return;
    }
    for (size_t w = 0; w < words_; ++w) mine.bitmap[w] |= group.bitmap[w];
  }
  // The groups collected since the last Take, by distance.
  std::vector<TokenGroup> Take() {
    std::vector<TokenGroup> out;
    for (size_t g = 0; g < used_; ++g) {
      TokenGroup& source = groups_[g];
      TokenGroup group;
      group.distance = source.distance;
      group.bitmap.swap(source.bitmap);
      group.ids = source.ids;
      out.push_back(std::move(group));
    }
    std::sort(out.begin(), out.end(),
              [](const TokenGroup& a, const TokenGroup& b) { return a.distance < b.distance; });
    Clear();
    return out;
  }

 private:
  size_t words_;
  std::vector<TokenGroup> groups_;
  size_t used_ = 0;
  size_t last_ = 0;
};

}  // namespace

struct MatchRuntime {
  MatchRuntime(const Grammar& grammar, std::shared_ptr<const TokenTable> table)
      : automaton(grammar),
        tokens(std::move(table)),
        state_at_depth(tokens->max_depth() + 1),
        collector(tokens->mask_words()) {}

  const MaskEntry& Mask(int32_t state) {
    const auto it = masks.find(state);
    if (it != masks.end()) return it->second;
    if (mask_bytes > kMaskCacheBytes) {
      masks.clear();
      local_masks.clear();
      mask_bytes = 0;
    }
    MaskEntry entry;
    int32_t context_distance = 0;
    const int32_t local = automaton.LocalState(state, &context_distance);
    if (local == GrammarAutomaton::kDead) {
      Walk(0, tokens->nodes().size(), state, &popped_scratch);
    } else {
      auto local_it = local_masks.find(local);
      if (local_it == local_masks.end()) {
        MaskEntry local_entry;
        Walk(0, tokens->nodes().size(), local, &local_entry.popped_nodes);
        local_entry.groups = collector.Take();
        mask_bytes += local_entry.Bytes();
        local_it = local_masks.emplace(local, std::move(local_entry)).first;
      }
      for (const TokenGroup& group : local_it->second.groups) {
        collector.Add(group, context_distance);
      }
      for (int32_t node : local_it->second.popped_nodes) WalkSubtree(node, state);
    }
    entry.groups = collector.Take();
    mask_bytes += entry.Bytes();
    return masks.emplace(state, std::move(entry)).first->second;
  }

  // Nodes [begin, end) of the trie in one pass, `state` before the first node's byte; a
  // subtree is skipped as soon as its prefix kills every stack. Nodes where a local stack
  // returned into its context are listed in `popped` and skipped (only local states
  // have such nodes).
  void Walk(size_t begin, size_t end, int32_t state, std::vector<int32_t>* popped) {
    const std::span<const TokenTable::Node> nodes = tokens->nodes();
    const std::span<const int32_t> token_ids = tokens->token_ids();
    const uint8_t* byte_class = automaton.grammar().byte_class.data();
    const size_t class_count = automaton.class_count();
    const int32_t* transitions = automaton.transition_table();
    const int32_t* distances = automaton.walk_distances();
    int32_t* state_at = state_at_depth.data();
    state_at[nodes[begin].depth - 1] = state;
    for (size_t i = begin; i < end;) {
      const TokenTable::Node& node = nodes[i];
      const int32_t from = state_at[node.depth - 1];
      const int cls = byte_class[node.byte];
      int32_t next = transitions[static_cast<size_t>(from) * class_count + cls];
      if (next == GrammarAutomaton::kUnknown) {
        next = automaton.ComputeStep(from, cls);
        transitions = automaton.transition_table();
        distances = automaton.walk_distances();
      }
      if (next == GrammarAutomaton::kDead) {
        i = node.subtree_end;
        continue;
      }
      const int32_t distance = distances[next];
      if (distance < 0) {
        popped->push_back(static_cast<int32_t>(i));
        i = node.subtree_end;
        continue;
      }
      state_at[node.depth] = next;
      if (node.token_count != 0) {
        collector.Add(distance, token_ids.subspan(node.tokens_begin, node.token_count));
      }
      ++i;
    }
  }

  // The subtree of `node`, from the full `state` at the root.
  void WalkSubtree(int32_t node, int32_t state) {
    const std::span<const TokenTable::Node> nodes = tokens->nodes();
    path.clear();
    for (int32_t n = tokens->Parent(node); n >= 0; n = tokens->Parent(n)) path.push_back(n);
    for (size_t p = path.size(); p-- > 0;) {
      state = automaton.Step(state, nodes[path[p]].byte);
      if (state == GrammarAutomaton::kDead) return;
    }
    Walk(node, nodes[node].subtree_end, state, &popped_scratch);
  }

  size_t MemoryBytes() const { return automaton.MemoryBytes() + mask_bytes; }

  std::mutex mutex;
  GrammarAutomaton automaton;
  std::shared_ptr<const TokenTable> tokens;
  std::unordered_map<int32_t, MaskEntry> masks;        // by state
  std::unordered_map<int32_t, MaskEntry> local_masks;  // by local state
  size_t mask_bytes = 0;
  std::vector<int32_t> state_at_depth;
  std::vector<int32_t> path;
  std::vector<int32_t> popped_scratch;  // stays empty: full states never pop
  GroupCollector collector;
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
  if (mask.size() < runtime_->tokens->mask_words()) {
    Fail(ErrorCode::kInternal, "token mask of ", mask.size(), " words for ",
         runtime_->tokens->vocab_rows(), " rows");
  }
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

std::string GrammarMatcher::ForcedBytes(size_t max_bytes) const {
  std::lock_guard<std::mutex> lock(runtime_->mutex);
  std::string forced;
  if (ended_) return forced;
  grammar::GrammarAutomaton& automaton = runtime_->automaton;
  // A byte is forced where exactly one byte class leads on and that class is one byte:
  // the classes' sizes are counted once, then each step tries classes, not bytes.
  const std::array<uint8_t, 256>& byte_class = automaton.grammar().byte_class;
  std::array<int, 256> class_size{};
  std::array<uint8_t, 256> class_byte{};
  for (int byte = 0; byte < 256; ++byte) {
    ++class_size[byte_class[byte]];
    class_byte[byte_class[byte]] = static_cast<uint8_t>(byte);
  }
  const int classes = static_cast<int>(automaton.class_count());
  int32_t state = state_;
  while (forced.size() < max_bytes && !automaton.IsComplete(state)) {
    int32_t next = grammar::GrammarAutomaton::kDead;
    int live = 0, only = 0;
    for (int c = 0; c < classes && live < 2; ++c) {
      const int32_t to = automaton.StepClass(state, c);
      if (to == grammar::GrammarAutomaton::kDead) continue;
      ++live;
      only = c;
      next = to;
    }
    if (live != 1 || class_size[only] != 1) break;
    forced.push_back(static_cast<char>(class_byte[only]));
    state = next;
  }
  return forced;
}

void ApplyTokenMask(std::span<const uint32_t> mask, float* logits, int64_t vocab_rows) {
  constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();
  for (int64_t w = 0; w * 32 < vocab_rows; ++w) {
    const uint32_t word = static_cast<size_t>(w) < mask.size() ? mask[w] : 0;
    if (word == ~uint32_t{0}) continue;
    const int64_t end = std::min<int64_t>(32, vocab_rows - w * 32);
    for (int64_t b = 0; b < end; ++b) {
      if (!(word >> b & 1)) logits[w * 32 + b] = kMinusInfinity;
    }
  }
}

}  // namespace qvl
