// Byte-level BPE on token ids: a word starts as one token per byte and adjacent pairs
// are merged lowest rank first (leftmost first among equal ranks), exactly like the
// Hugging Face `tokenizers` BPE model. Immutable after construction, so Encode may run
// on many threads at once (each with its own scratch).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace qvl::text {

struct MergeRule {
  int32_t left;
  int32_t right;
  int32_t merged;  // the token left + right
};

// Working memory of one Encode call, reused across the words of a text.
struct BpeScratch {
  std::vector<int32_t> ids;   // token of each symbol; -1 once merged into its left
  std::vector<int32_t> next;  // linked list over the byte positions
  std::vector<int32_t> prev;
  std::vector<uint64_t> heap;  // candidate merges: rank << 32 | position
};

class BytePairEncoder {
 public:
  BytePairEncoder() : BytePairEncoder({}, {}) {}
  // `byte_tokens[b]` is the token of the single byte b; the rank of a rule is its index.
  // When a pair occurs twice the first (lowest rank) rule wins, as in `tokenizers`.
  BytePairEncoder(const std::array<int32_t, 256>& byte_tokens, std::span<const MergeRule> rules);

  // Appends the tokens of `word` (non-empty) to `out`.
  void Encode(std::string_view word, BpeScratch* scratch, std::vector<int32_t>* out) const;

  size_t num_merges() const { return num_merges_; }

 private:
  struct Slot {
    uint64_t key;  // left << 32 | right; kEmptyKey when unused
    int32_t rank;
    int32_t merged;
  };
  static constexpr uint64_t kEmptyKey = ~uint64_t{0};

  static uint64_t Key(int32_t left, int32_t right) {
    return uint64_t{static_cast<uint32_t>(left)} << 32 | static_cast<uint32_t>(right);
  }
  // The rule for the pair, or nullptr.
  const Slot* Find(int32_t left, int32_t right) const;

  std::array<int32_t, 256> byte_tokens_;
  std::vector<Slot> slots_;  // open addressing, linear probing, power-of-two size
  uint64_t mask_ = 0;
  size_t num_merges_ = 0;
};

}  // namespace qvl::text
