#include "base/cpu_features.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <iostream>

#include "base/error.h"

namespace qvl {
namespace {

TEST(CpuFeatures, CountsCores) {
  const CpuFeatures& f = GetCpuFeatures();
  EXPECT_GE(f.logical_cpus, 1);
  EXPECT_GE(f.physical_cores, 1);
  EXPECT_LE(f.physical_cores, f.logical_cpus);
  EXPECT_GE(f.compute_cpus, 1);
  EXPECT_LE(f.compute_cpus, f.physical_cores);
  if (f.cpu_quota > 0.0) {
    EXPECT_LE(f.compute_cpus, f.cpu_quota + 1.0);
  }
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

// Every tier the CPU supports can be asked for by name; the best is the detected one.
TEST(CpuFeatures, SupportedTiersCanBeChosenByName) {
  const std::vector<CpuTier> tiers = SupportedTiers();
  ASSERT_FALSE(tiers.empty());
  EXPECT_EQ(tiers.front(), CpuTier::kScalar);
  EXPECT_EQ(tiers.back(), DetectedTier());
  for (CpuTier t : tiers) {
    EXPECT_TRUE(TierSupported(t));
    ::setenv("QVL_CPU", CpuTierName(t), 1);
    EXPECT_EQ(ActiveTier(), t) << CpuTierName(t);
  }
  ::unsetenv("QVL_CPU");
}

// A tier the CPU lacks is refused with the best one it has, never run into SIGILL.
TEST(CpuFeatures, RefusesATierTheCpuLacks) {
#if defined(__x86_64__)
  const CpuFeatures& f = GetCpuFeatures();
  const CpuTier missing = !f.avx_vnni   ? CpuTier::kAvxVnni
                          : !f.amx_int8 ? CpuTier::kAmx
                                        : CpuTier::kNeon;
#else
  const CpuTier missing = CpuTier::kAvx2;
#endif
  ASSERT_FALSE(TierSupported(missing));
  ::setenv("QVL_CPU", CpuTierName(missing), 1);
  try {
    ActiveTier();
    ADD_FAILURE() << "expected an error for " << CpuTierName(missing);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not support"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(CpuTierName(DetectedTier())), std::string::npos);
  }
  ::unsetenv("QVL_CPU");
}

// The line goes to the log too: runs under emulation (scripts/check_arm.sh --run) show
// which CPU features the emulated model has, e.g. dotprod or none.
TEST(CpuFeatures, DescribesCpu) {
  const std::string line = DescribeCpu();
  std::cout << "CPU: " << line << "\n";
  EXPECT_NE(line.find("cores"), std::string::npos);
}

}  // namespace
}  // namespace qvl
