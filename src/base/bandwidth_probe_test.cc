#include "base/bandwidth_probe.h"

#include <gtest/gtest.h>

namespace qvl {
namespace {

TEST(BandwidthProbe, ReadsEveryWordOfTheBuffer) {
  ThreadPool pool(2, /*pin=*/false);
  for (size_t bytes : {size_t{64}, size_t{4096 + 64 * 3}, size_t{1} << 20}) {
    const BandwidthProbe p = MeasureReadBandwidth(pool, bytes, 2);
    EXPECT_EQ(p.checksum, ExpectedProbeChecksum(bytes)) << bytes;
    EXPECT_GT(p.gb_per_s, 0.0);
  }
}

TEST(BandwidthProbe, EmptyBufferMeasuresNothing) {
  ThreadPool pool(1, /*pin=*/false);
  const BandwidthProbe p = MeasureReadBandwidth(pool, 63, 1);
  EXPECT_EQ(p.gb_per_s, 0.0);
  EXPECT_EQ(p.checksum, 0u);
}

}  // namespace
}  // namespace qvl
