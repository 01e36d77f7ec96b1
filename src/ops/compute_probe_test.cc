#include "ops/compute_probe.h"

#include <gtest/gtest.h>

#include <string>

#include "base/cpu_features.h"

namespace qvl {
namespace {

TEST(ComputeProbe, NamesTheUnitItRanAndMeasuresARate) {
  ThreadPool pool(2, /*pin=*/false);
  const ComputeProbe p = MeasureComputePeak(pool);
  const CpuTier tier = ActiveTier();
  if (tier != CpuTier::kAmx && tier != CpuTier::kAvx512Bf16 && tier != CpuTier::kAvx2) {
    EXPECT_STREQ(p.unit, "");
    GTEST_SKIP() << "needs AVX2, AVX512-VNNI/BF16 or AMX for a probe; this CPU's tier is "
                 << CpuTierName(tier);
  }
  EXPECT_STREQ(p.unit, tier == CpuTier::kAmx          ? "amx tiles"
                       : tier == CpuTier::kAvx512Bf16 ? "avx512 vnni"
                                                      : "avx2");
  EXPECT_GT(p.int8_tops, 0.0);
  EXPECT_GT(p.bf16_tflops, 0.0);
}

}  // namespace
}  // namespace qvl
