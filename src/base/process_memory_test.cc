#include "base/process_memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace qvl {
namespace {

TEST(ProcessMemory, TouchedMemoryRaisesRssAndPeak) {
  const int64_t before = CurrentRssBytes();
  ASSERT_GT(before, 0);
  std::vector<char> block(64 << 20);
  std::memset(block.data(), 1, block.size());
  // The peak is read after the current size: the process can grow between two reads
  // (under qemu, the emulator's own code cache grows as new code runs), and only a peak
  // read later is sure to be at least a size read earlier.
  const int64_t current = CurrentRssBytes();
  EXPECT_GE(current, before + (48 << 20));
  EXPECT_GE(PeakRssBytes(), current);
}

}  // namespace
}  // namespace qvl
