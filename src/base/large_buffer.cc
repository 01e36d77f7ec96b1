#include "base/large_buffer.h"

#include <cstdlib>

#include "base/error.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace qvl {

void* AllocateLarge(size_t bytes, const char* what) {
  const size_t align = bytes >= kHugePageBytes ? kHugePageBytes : 64;
  const size_t size = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, size == 0 ? align : size);
  if (p == nullptr) Fail(ErrorCode::kIo, "out of memory for a ", bytes, "-byte ", what);
#if defined(__linux__)
  // Only a hint, before the first touch: without transparent huge pages the memory works
  // the same.
  if (align == kHugePageBytes) ::madvise(p, size, MADV_HUGEPAGE);
#endif
  return p;
}

void FreeLarge(void* p) { std::free(p); }

}  // namespace qvl
