// A model's vocabulary as the grammar matcher needs it: every token that may appear in
// constrained output, as a byte trie laid out in depth-first order so that a mask is one
// linear pass that skips whole subtrees once no grammar stack survives their prefix.
// Built once per model from the tokenizer; immutable and shared.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace qvl {

class TokenTable {
 public:
  // One trie node: the bytes from the root to it spell a prefix of some token.
  struct Node {
    int32_t subtree_end;   // index one past the node's last descendant
    int32_t tokens_begin;  // tokens spelled exactly by this node:
    uint16_t token_count;  //   token_ids[tokens_begin, tokens_begin + token_count)
    uint8_t depth;         // 1 for children of the root
    uint8_t byte;
  };
  // Longer tokens are left out of the trie (never allowed); Qwen's longest has 128 bytes.
  static constexpr size_t kMaxTokenBytes = 255;

  int64_t vocab_rows() const { return vocab_rows_; }
  size_t mask_words() const { return static_cast<size_t>((vocab_rows_ + 31) / 32); }
  std::span<const int32_t> eos_ids() const { return eos_ids_; }
  bool IsEos(int32_t id) const;
  // Bytes of a token that may be generated under a grammar; empty for special tokens,
  // eos, and ids past the tokenizer's vocabulary.
  std::string_view Bytes(int32_t id) const;

  std::span<const Node> nodes() const { return nodes_; }
  std::span<const int32_t> token_ids() const { return token_ids_; }
  size_t max_depth() const { return max_depth_; }
  // The node's parent, -1 for a child of the root.
  int32_t Parent(size_t node) const { return parents_[node]; }

 private:
  friend std::shared_ptr<const TokenTable> BuildTokenTable(const Tokenizer& tokenizer,
                                                           int64_t vocab_rows,
                                                           std::span<const int32_t> eos_ids);
  int64_t vocab_rows_ = 0;
  std::vector<int32_t> eos_ids_;
  std::vector<char> bytes_;
  std::vector<uint32_t> byte_offsets_;  // per id, [offsets[id], offsets[id + 1])
  std::vector<Node> nodes_;
  std::vector<int32_t> parents_;
  std::vector<int32_t> token_ids_;
  size_t max_depth_ = 0;
};

// vocab_rows is the logits row length (ids >= the tokenizer's vocabulary are never
// allowed); eos_ids end an answer and are allowed exactly when the grammar is complete.
// Throws Error(kInvalidArgument) for an eos id outside [0, vocab_rows).
std::shared_ptr<const TokenTable> BuildTokenTable(const Tokenizer& tokenizer, int64_t vocab_rows,
                                                  std::span<const int32_t> eos_ids);

}  // namespace qvl
