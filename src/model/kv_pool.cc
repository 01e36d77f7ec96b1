#include "model/kv_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "base/error.h"

namespace qvl {
namespace {

// Anonymous mapping: pages are only backed by memory once written, so an idle pool
// costs nothing and resident memory follows what conversations actually use.
uint8_t* MapZeroed(size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    Fail(ErrorCode::kIo, "cannot reserve ", bytes >> 20, " MiB for the KV cache");
  // A layer's keys of one head are 4 KiB chunks a KV page apart (about 2 MiB): on 4 KiB
  // pages attention over a long prompt missed the TLB at every chunk. Only a hint.
  ::madvise(p, bytes, MADV_HUGEPAGE);
  return static_cast<uint8_t*>(p);
}

}  // namespace

size_t KvPool::PageBytes(const TextConfig& config, DType dtype, int page_size) {
  return static_cast<size_t>(config.num_layers) * 2 * config.num_kv_heads * page_size *
         static_cast<size_t>(KvTokenBytes(dtype, config.head_dim));
}

KvPool::KvPool(const TextConfig& config, DType dtype, int page_size, size_t budget_bytes)
    : dtype_(dtype),
      page_size_(page_size),
      layers_(config.num_layers),
      kv_heads_(config.num_kv_heads),
      token_bytes_(static_cast<size_t>(KvTokenBytes(dtype, config.head_dim))),
      num_pages_(0) {
  CheckKvLayout(dtype, config.head_dim, page_size);
  num_pages_ = std::max<int64_t>(1, static_cast<int64_t>(budget_bytes / page_bytes()));
  memory_ = MapZeroed(bytes());
  refs_.assign(num_pages_, 0);
  free_.reserve(num_pages_);
  for (int64_t p = num_pages_ - 1; p >= 0; --p) free_.push_back(static_cast<int32_t>(p));
}

KvPool::~KvPool() { ::munmap(memory_, bytes()); }

int32_t KvPool::Allocate() {
  if (free_.empty()) return -1;
  const int32_t page = free_.back();
  free_.pop_back();
  refs_[page] = 1;
  return page;
}

void KvPool::AddRef(int32_t page) { ++refs_[page]; }

void KvPool::Release(int32_t page) {
  if (--refs_[page] == 0) free_.push_back(page);
}

KvLayerView KvPool::Layer(int layer, const int32_t* pages) const {
  const size_t elem = DTypeSize(dtype_);
  const size_t head_bytes = static_cast<size_t>(page_size_) * token_bytes_;
  const size_t layer_bytes = 2 * kv_heads_ * head_bytes;
  KvLayerView v;
  v.dtype = dtype_;
  v.k = memory_ + layer * layer_bytes;
  v.v = memory_ + layer * layer_bytes + kv_heads_ * head_bytes;
  v.page_stride = static_cast<int64_t>(page_bytes() / elem);
  v.head_stride = static_cast<int64_t>(head_bytes / elem);
  v.page_size = page_size_;
  v.pages = pages;
  return v;
}

void KvPool::CopyPage(int32_t src, int32_t dst, int tokens) {
  // Slots are packed in groups of kKvGroupTokens (ops/attention.h): copy whole groups.
  const size_t groups = (static_cast<size_t>(tokens) + kKvGroupTokens - 1) / kKvGroupTokens;
  const size_t run = groups * kKvGroupTokens * token_bytes_;
  const size_t head_bytes = static_cast<size_t>(page_size_) * token_bytes_;
  uint8_t* base = memory_;
  for (size_t block = 0; block < static_cast<size_t>(layers_) * 2 * kv_heads_; ++block) {
    std::memcpy(base + dst * page_bytes() + block * head_bytes,
                base + src * page_bytes() + block * head_bytes, run);
  }
}

}  // namespace qvl
