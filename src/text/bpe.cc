#include "text/bpe.h"

#include <algorithm>
#include <bit>
#include <functional>

namespace qvl::text {
namespace {

uint64_t HashKey(uint64_t key) {
  // Fibonacci hashing; the high bits are well mixed, so fold them down.
  const uint64_t h = key * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

// Heap entries order by rank, then by position: the Hugging Face merge order.
uint64_t HeapEntry(int32_t rank, int32_t pos) {
  return uint64_t{static_cast<uint32_t>(rank)} << 32 | static_cast<uint32_t>(pos);
}

}  // namespace

BytePairEncoder::BytePairEncoder(const std::array<int32_t, 256>& byte_tokens,
                                 std::span<const MergeRule> rules)
    : byte_tokens_(byte_tokens) {
  // At most half full keeps probe sequences short.
  const size_t capacity = std::bit_ceil(std::max<size_t>(16, rules.size() * 2));
  slots_.assign(capacity, Slot{kEmptyKey, 0, 0});
  mask_ = capacity - 1;
  for (size_t rank = 0; rank < rules.size(); ++rank) {
    const MergeRule& rule = rules[rank];
    const uint64_t key = Key(rule.left, rule.right);
    uint64_t i = HashKey(key) & mask_;
    while (slots_[i].key != kEmptyKey && slots_[i].key != key) i = (i + 1) & mask_;
    if (slots_[i].key == key) continue;
    slots_[i] = Slot{key, static_cast<int32_t>(rank), rule.merged};
    ++num_merges_;
  }
}

const BytePairEncoder::Slot* BytePairEncoder::Find(int32_t left, int32_t right) const {
  const uint64_t key = Key(left, right);
  for (uint64_t i = HashKey(key) & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.key == key) return &slot;
    if (slot.key == kEmptyKey) return nullptr;
  }
}

void BytePairEncoder::Encode(std::string_view word, BpeScratch* scratch,
                             std::vector<int32_t>* out) const {
  const auto n = static_cast<int32_t>(word.size());
  if (n == 1) {
    out->push_back(byte_tokens_[static_cast<uint8_t>(word[0])]);
    return;
  }

  // Symbols form a linked list over the byte positions; a merge keeps the left symbol
  // and unlinks the right one. Candidate merges wait in a min-heap and are checked
  // when popped, since an earlier merge may have changed either side.
  std::vector<int32_t>& ids = scratch->ids;
  std::vector<int32_t>& next = scratch->next;
  std::vector<int32_t>& prev = scratch->prev;
  std::vector<uint64_t>& heap = scratch->heap;
  ids.resize(n);
  next.resize(n);
  prev.resize(n);
  heap.clear();
  const auto push = [&](int32_t pos) {
    if (const Slot* rule = Find(ids[pos], ids[next[pos]])) {
      heap.push_back(HeapEntry(rule->rank, pos));
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
    }
  };

  for (int32_t i = 0; i < n; ++i) {
    ids[i] = byte_tokens_[static_cast<uint8_t>(word[i])];
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  for (int32_t i = 0; i + 1 < n; ++i) push(i);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const uint64_t entry = heap.back();
    heap.pop_back();
    const auto rank = static_cast<int32_t>(entry >> 32);
    const auto pos = static_cast<int32_t>(entry & 0xFFFFFFFF);
    const int32_t right = next[pos];
    if (ids[pos] < 0 || right >= n) continue;
    const Slot* rule = Find(ids[pos], ids[right]);
    if (rule == nullptr || rule->rank != rank) continue;  // stale: a neighbor changed

    ids[pos] = rule->merged;
    ids[right] = -1;
    next[pos] = next[right];
    if (next[pos] < n) prev[next[pos]] = pos;
    if (prev[pos] >= 0) push(prev[pos]);
    if (next[pos] < n) push(pos);
  }

  for (int32_t i = 0; i < n; i = next[i]) out->push_back(ids[i]);
}

}  // namespace qvl::text
