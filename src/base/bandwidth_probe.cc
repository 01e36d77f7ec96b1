#include "base/bandwidth_probe.h"

#include <sys/mman.h>

#include <algorithm>
#include <vector>

#include "base/error.h"
#include "base/timer.h"

namespace qvl {
namespace {

constexpr size_t kWordsPerLine = 8;

uint64_t Pattern(size_t i) { return i * 0x9e3779b97f4a7c15ull; }

// XOR of words [begin, end): eight independent lanes so the loop is load-bound.
uint64_t XorRange(const uint64_t* w, size_t begin, size_t end) {
  uint64_t acc[kWordsPerLine] = {};
  for (size_t i = begin; i < end; i += kWordsPerLine) {
    for (size_t l = 0; l < kWordsPerLine; ++l) acc[l] ^= w[i + l];
  }
  uint64_t x = 0;
  for (uint64_t a : acc) x ^= a;
  return x;
}

}  // namespace

uint64_t ExpectedProbeChecksum(size_t bytes) {
  const size_t words = bytes / 64 * kWordsPerLine;
  uint64_t x = 0;
  for (size_t i = 0; i < words; ++i) x ^= Pattern(i);
  return x;
}

BandwidthProbe MeasureReadBandwidth(ThreadPool& pool, size_t bytes, int passes) {
  const size_t words = bytes / 64 * kWordsPerLine;
  BandwidthProbe result;
  if (words == 0) return result;
  const size_t size = words * sizeof(uint64_t);
  void* mem = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    Fail(ErrorCode::kIo, "cannot map ", size >> 20, " MiB for the bandwidth probe");
  }
  uint64_t* w = static_cast<uint64_t*>(mem);
  const int64_t lines = static_cast<int64_t>(words / kWordsPerLine);
  // Each thread fills (and so faults in) the lines it will read.
  const int64_t per_thread = (lines + pool.size() - 1) / pool.size();
  pool.RunOnAll([&](int t) {
    const size_t begin = std::min<int64_t>(lines, t * per_thread) * kWordsPerLine;
    const size_t end = std::min<int64_t>(lines, (t + 1) * per_thread) * kWordsPerLine;
    for (size_t i = begin; i < end; ++i) w[i] = Pattern(i);
  });
  std::vector<uint64_t> partial(pool.size());
  for (int pass = 0; pass < std::max(1, passes); ++pass) {
    Stopwatch clock;
    pool.RunOnAll([&](int t) {
      const size_t begin = std::min<int64_t>(lines, t * per_thread) * kWordsPerLine;
      const size_t end = std::min<int64_t>(lines, (t + 1) * per_thread) * kWordsPerLine;
      partial[t] = XorRange(w, begin, end);
    });
    const double seconds = clock.Seconds();
    result.gb_per_s = std::max(result.gb_per_s, static_cast<double>(size) / seconds / 1e9);
  }
  ::munmap(mem, size);
  for (uint64_t p : partial) result.checksum ^= p;
  return result;
}

}  // namespace qvl
