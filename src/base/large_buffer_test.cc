#include "base/large_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>

#include "base/error.h"

namespace qvl {
namespace {

bool AlignedTo(const void* p, size_t align) { return reinterpret_cast<uintptr_t>(p) % align == 0; }

TEST(LargeBuffer, LargeBlocksStartOnAHugePageAndSmallOnesOnACacheLine) {
  void* large = AllocateLarge(kHugePageBytes + 1, "buffer");
  void* small = AllocateLarge(100, "buffer");
  EXPECT_TRUE(AlignedTo(large, kHugePageBytes));
  EXPECT_TRUE(AlignedTo(small, 64));
  // The whole rounded-up block is usable.
  static_cast<char*>(large)[2 * kHugePageBytes - 1] = 1;
  FreeLarge(large);
  FreeLarge(small);
}

TEST(LargeBuffer, VectorKeepsItsValuesAcrossGrowth) {
  LargeVector<int32_t> v(1000);
  std::iota(v.begin(), v.end(), 0);
  v.resize(2 * (kHugePageBytes / sizeof(int32_t)));
  EXPECT_TRUE(AlignedTo(v.data(), kHugePageBytes));
  EXPECT_EQ(v[999], 999);
  EXPECT_EQ(v.back(), 0);
  LargeVector<int32_t>().swap(v);
  EXPECT_EQ(v.capacity(), 0u);
}

TEST(LargeBuffer, RunningOutOfMemoryNamesTheBuffer) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer stops the process at an impossible allocation";
#endif
  try {
    AllocateLarge(size_t{1} << 62, "weight");
    FAIL() << "allocated 2^62 bytes";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("out of memory for a 4611686018427387904-byte weight"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace qvl
