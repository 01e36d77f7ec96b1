// What the CPU can do, and which kernel tier qvl runs on it. Kernels are compiled for
// several tiers and chosen once at start-up, so one binary runs on any x86-64 or ARM.
#pragma once

#include <string>
#include <vector>

namespace qvl {

struct CpuFeatures {
  // x86-64
  bool sse42 = false;
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
  bool avx_vnni = false;
  bool amx_bf16 = false;
  bool amx_int8 = false;
  // Linux granted this process the AMX tile data state (arch_prctl ARCH_REQ_XCOMP_PERM);
  // without it the first tile instruction raises SIGILL.
  bool amx_permitted = false;
  // ARM
  bool neon = false;
  bool arm_dotprod = false;
  bool arm_bf16 = false;
  bool arm_i8mm = false;

  std::string brand;
  int logical_cpus = 1;    // CPUs this process may run on
  int physical_cores = 1;  // distinct cores among them (hyper-threads counted once)
  double cpu_quota = 0.0;  // CPUs' worth of time its control group grants (0: no limit)
  // Compute threads worth running: physical_cores, at most cpu_quota rounded up.
  int compute_cpus = 1;
};

// The CPUs whose time this process may use: cpu_quota rounded up (a quota of 1.5 lets two
// threads run), logical_cpus without a quota.
int GrantedCpus(const CpuFeatures& f);

// Kernel tiers, lowest first. A tier implies every tier below it on the same ISA, except
// kAvxVnni: the AVX-512 tiers do not need it (Skylake-X to Ice Lake lack it), and they
// run their own int8 kernels anyway.
enum class CpuTier {
  kScalar,      // plain C++, any CPU
  kAvx2,        // AVX2 + FMA + F16C (Haswell, Zen 1+)
  kAvxVnni,     // + AVX-VNNI without AVX-512 (Alder Lake and later cores, N100, Sierra Forest)
  kAvx512,      // AVX-512 F/BW/VL/DQ (Skylake-X)
  kAvx512Vnni,  // + AVX512-VNNI (Cascade Lake, Ice Lake)
  kAvx512Bf16,  // + AVX512-BF16 (Zen 4, Sapphire Rapids)
  kAmx,         // + AMX-INT8 and AMX-BF16 tiles, permitted by the kernel (Sapphire Rapids)
  kNeon,        // ARMv8 NEON (+dotprod where present)
};

const char* CpuTierName(CpuTier tier);

// Detected once, thread-safe.
const CpuFeatures& GetCpuFeatures();

// Whether this CPU runs `tier`'s kernels.
bool TierSupported(CpuTier tier);

// Every tier this CPU runs, lowest first (scalar included).
std::vector<CpuTier> SupportedTiers();

// The best tier this CPU supports.
CpuTier DetectedTier();

// The tier kernels use: DetectedTier(), lowered by the environment variable
// QVL_CPU=scalar|neon|avx2|avxvnni|avx512|avx512vnni|avx512bf16|amx. Asking for a tier the CPU
// lacks, or an unknown name, throws Error(kInvalidArgument) naming the variable.
CpuTier ActiveTier();

// The first logical CPU of each physical core this process may use (hyper-threads of a
// core are skipped), for pinning one compute thread per core.
std::vector<int> OneCpuPerPhysicalCore();

// One line describing the CPU and its relevant features, for `qvl info` and logs.
std::string DescribeCpu();

}  // namespace qvl
