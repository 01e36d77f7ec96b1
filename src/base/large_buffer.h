// Memory for buffers of tens of megabytes (a prompt's or an image's activations, packed
// weights) on 2 MiB pages where the kernel offers transparent huge pages on request (the
// `madvise` mode, Debian's default). The matmuls and the attention stride through such
// buffers a row at a time (12 KiB apart for the vision tower's qkv), and with 4 KiB pages
// each row can cost a TLB miss, a two-level walk in a VM. With these and the KV cache on
// huge pages the bench prompt's prefill ran 9 % faster on Zen 5, about what making every
// anonymous mapping huge (THP `always`) gave.
#pragma once

#include <cstddef>
#include <vector>

namespace qvl {

// Buffers from this size on are aligned to a huge page and advised to use them.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` of uninitialized memory, 64-byte aligned (2 MiB from kHugePageBytes on). Throws
// kIo naming `what` when memory runs out. Release with FreeLarge(p).
void* AllocateLarge(size_t bytes, const char* what);
void FreeLarge(void* p);

// A std::allocator whose large blocks come from AllocateLarge.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  explicit HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(AllocateLarge(n * sizeof(T), "buffer")); }
  void deallocate(T* p, size_t) { FreeLarge(p); }
  friend bool operator==(const HugePageAllocator&, const HugePageAllocator&) { return true; }
};

// A growable buffer of activations: std::vector on huge pages.
template <typename T>
using LargeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace qvl
