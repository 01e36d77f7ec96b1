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
  EXPECT_GE(CurrentRssBytes(), before + (48 << 20));
  EXPECT_GE(PeakRssBytes(), CurrentRssBytes());
}

}  // namespace
}  // namespace qvl
