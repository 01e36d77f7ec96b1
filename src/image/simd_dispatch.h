// Whether image/ runs its AVX2 kernels: on x86-64 when qvl::ActiveTier() is AVX2 or
// above (QVL_CPU=scalar forces the scalar twins).
#pragma once

#include "base/cpu_features.h"

namespace qvl {

inline bool ImageKernelsUseAvx2() {
#if defined(__x86_64__)
  const CpuTier tier = ActiveTier();
  return tier == CpuTier::kAvx2 || tier == CpuTier::kAvx512 || tier == CpuTier::kAvx512Bf16;
#else
  return false;
#endif
}

}  // namespace qvl
