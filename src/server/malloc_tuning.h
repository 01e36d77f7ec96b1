// Keeps a long-running server's memory flat under glibc. Two defaults make RSS creep up
// for a long time with image traffic: every thread that allocates gets its own arena
// (up to 8 per core) that keeps what it freed, and after a large block is freed the
// mmap threshold rises (up to 32 MiB), so later image buffers come from the arenas and
// fragment them. A few shared arenas and a fixed 1 MiB threshold (large buffers are
// mapped and unmapped) keep RSS level, measured by server_load_test.
#pragma once

namespace qvl {

// Call before threads start. No effect outside glibc.
void TuneMallocForServing();

// Returns the free pages of every arena to the system (malloc_trim), so that RSS at rest
// is what is in use. Meant for the engine's idle hook. No effect outside glibc.
void ReleaseFreeMemory();

}  // namespace qvl
