#include "server/malloc_tuning.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace qvl {

void TuneMallocForServing() {
#if defined(__GLIBC__)
  mallopt(M_ARENA_MAX, 2);
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

}  // namespace qvl
