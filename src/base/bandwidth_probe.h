// A quick measurement of this machine's memory read bandwidth, the bound of decode
// speed: all threads of a pool stream through a buffer far larger than the caches.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/thread_pool.h"

namespace qvl {

struct BandwidthProbe {
  double gb_per_s = 0;    // best pass, 1e9 bytes per second
  uint64_t checksum = 0;  // XOR of every 64-bit word read (keeps the reads honest)
};

// Reads a `bytes` buffer (rounded down to 64-byte lines; filled once with a known pattern)
// `passes` times with every thread of `pool` and keeps the fastest pass. 256 MiB and 3
// passes take about a tenth of a second. The buffer is freed before returning.
BandwidthProbe MeasureReadBandwidth(ThreadPool& pool, size_t bytes = size_t{256} << 20,
                                    int passes = 3);

// The checksum MeasureReadBandwidth reports for a buffer of `bytes`.
uint64_t ExpectedProbeChecksum(size_t bytes);

}  // namespace qvl
