// Whether image/ runs its AVX2 kernels: on x86-64 when qvl::ActiveTier() is AVX2 or
// above (QVL_CPU=scalar forces the scalar twins).
#pragma once

#include "base/cpu_features.h"

namespace qvl {

inline bool ImageKernelsUseAvx2() {
#if defined(__x86_64__)
  // A switch over every tier, not a comparison: a tier added later fails to compile here
  // (-Wswitch) until it says which kernels it runs, instead of silently running scalar.
  switch (ActiveTier()) {
    case CpuTier::kAvx2:
    case CpuTier::kAvxVnni:
    case CpuTier::kAvx512:
    case CpuTier::kAvx512Vnni:
    case CpuTier::kAmx:
    case CpuTier::kAvx512Bf16:
      return true;
    case CpuTier::kScalar:
    case CpuTier::kNeon:
      return false;
  }
#endif
  return false;
}

}  // namespace qvl
