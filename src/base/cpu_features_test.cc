#include "base/cpu_features.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "base/error.h"

namespace qvl {
namespace {

TEST(CpuFeatures, CountsCores) {
  const CpuFeatures& f = GetCpuFeatures();
  EXPECT_GE(f.logical_cpus, 1);
  EXPECT_GE(f.physical_cores, 1);
  EXPECT_LE(f.physical_cores, f.logical_cpus);
}

TEST(CpuFeatures, EnvironmentLowersTier) {
  ::setenv("QVL_CPU", "scalar", 1);
  EXPECT_EQ(ActiveTier(), CpuTier::kScalar);
  ::setenv("QVL_CPU", "nonsense", 1);
  try {
    ActiveTier();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("QVL_CPU=nonsense"), std::string::npos);
  }
  ::unsetenv("QVL_CPU");
  EXPECT_EQ(ActiveTier(), DetectedTier());
}

TEST(CpuFeatures, DescribesCpu) { EXPECT_NE(DescribeCpu().find("cores"), std::string::npos); }

}  // namespace
}  // namespace qvl
