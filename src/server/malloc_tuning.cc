#include "server/malloc_tuning.h"

#include <cstdlib>  // defines __GLIBC__ (via <features.h>) under glibc

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

void ReleaseFreeMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace qvl
