// The key/value cache of the text decoder, in fixed-size pages shared by all sequences.
// A sequence owns a block table (page ids); a page holds `page_size` consecutive tokens
// of every layer, laid out [layer][k|v][kv_head][token][head_dim] so attention reads each
// head's keys contiguously: f32, bf16, or int8 with a scale per token and 32 dims (i8).
// Pages are reference counted so sequences with a common prefix share them (the engine's
// prefix cache).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/dtype.h"
#include "model/config.h"
#include "ops/attention.h"

namespace qvl {

class KvPool {
 public:
  // Sizes the pool to the largest page count within `budget_bytes` (at least one page).
  KvPool(const TextConfig& config, DType dtype, int page_size, size_t budget_bytes);
  ~KvPool();
  KvPool(const KvPool&) = delete;
  KvPool& operator=(const KvPool&) = delete;

  // Bytes of one page of `page_size` tokens: for sizing a budget in pages.
  static size_t PageBytes(const TextConfig& config, DType dtype, int page_size);

  int page_size() const { return page_size_; }
  int64_t num_pages() const { return num_pages_; }
  int64_t free_pages() const { return static_cast<int64_t>(free_.size()); }
  size_t page_bytes() const {
    return static_cast<size_t>(layers_) * 2 * kv_heads_ * page_size_ * token_bytes_;
  }
  size_t bytes() const { return page_bytes() * num_pages_; }
  DType dtype() const { return dtype_; }

  // Takes a free page with reference count 1; returns -1 when none is left.
  int32_t Allocate();
  void AddRef(int32_t page);
  // Drops one reference; the page becomes free at zero.
  void Release(int32_t page);
  int32_t refcount(int32_t page) const { return refs_[page]; }

  // View of one layer through a sequence's block table (which must outlive the view).
  KvLayerView Layer(int layer, const int32_t* pages) const;

  // Copies the first `tokens` slots of page `src` into page `dst` (every layer), for a
  // sequence that must write into a page it shares.
  void CopyPage(int32_t src, int32_t dst, int tokens);

 private:
  DType dtype_;
  int page_size_;
  int layers_;
  int kv_heads_;
  size_t token_bytes_;  // one token of one kv head (KvTokenBytes)
  int64_t num_pages_;
  uint8_t* memory_ = nullptr;  // anonymous mapping of bytes()
  std::vector<int32_t> refs_;
  std::vector<int32_t> free_;
};

}  // namespace qvl
