#include "ops/compute_probe.h"

#include <gtest/gtest.h>

#include <string>

#include "base/cpu_features.h"

namespace qvl {
namespace {

// The unit each tier's probe measures: the instructions of its own int8 and bf16 kernels.
const char* ExpectedUnit(CpuTier tier) {
  switch (tier) {
    case CpuTier::kAmx:
      return "amx tiles";
    case CpuTier::kAvx512Bf16:
      return "avx512 vnni";
    case CpuTier::kAvx512Vnni:
      return "avx512 vnni; bf16 as avx512 fma";
    case CpuTier::kAvxVnni:
      return "avx-vnni; bf16 as avx2 fma";
    case CpuTier::kAvx512:
      return "avx512bw; bf16 as avx512 fma";
    case CpuTier::kAvx2:
      return "avx2";
    case CpuTier::kScalar:
    case CpuTier::kNeon:
      break;
  }
  return "";
}

TEST(ComputeProbe, NamesTheUnitItRanAndMeasuresARate) {
  ThreadPool pool(2, /*pin=*/false);
  const ComputeProbe p = MeasureComputePeak(pool);
  const CpuTier tier = ActiveTier();
  EXPECT_STREQ(p.unit, ExpectedUnit(tier));
  if (*ExpectedUnit(tier) == '\0') {
    GTEST_SKIP() << "needs AVX2 or above for a probe; this CPU's tier is " << CpuTierName(tier);
  }
  EXPECT_GT(p.int8_tops, 0.0);
  EXPECT_GT(p.bf16_tflops, 0.0);
}

}  // namespace
}  // namespace qvl
