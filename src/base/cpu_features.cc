#include "base/cpu_features.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <utility>

#include "base/cgroup_cpu.h"
#include "base/error.h"
#include "base/log.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <asm/prctl.h>
#include <sys/syscall.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace qvl {
namespace {

#if defined(__x86_64__) || defined(__i386__)
uint64_t ReadXcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

void DetectX86(CpuFeatures& f) {
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return;
  const unsigned max_leaf = a;
  __get_cpuid(1, &a, &b, &c, &d);
  const bool osxsave = c & (1u << 27);
  f.sse42 = c & (1u << 20);
  f.fma = c & (1u << 12);
  f.f16c = c & (1u << 29);
  const bool avx = c & (1u << 28);
  const uint64_t xcr0 = osxsave ? ReadXcr0() : 0;
  const bool os_ymm = (xcr0 & 0x6) == 0x6;
  const bool os_zmm = (xcr0 & 0xe6) == 0xe6;
  const bool os_amx = (xcr0 & 0x60000) == 0x60000;
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    f.avx2 = avx && os_ymm && (b & (1u << 5));
    f.avx512f = os_zmm && (b & (1u << 16));
    f.avx512dq = os_zmm && (b & (1u << 17));
    f.avx512bw = os_zmm && (b & (1u << 30));
    f.avx512vl = os_zmm && (b & (1u << 31));
    f.avx512_vnni = os_zmm && (c & (1u << 11));
    f.amx_bf16 = os_amx && (d & (1u << 22));
    f.amx_int8 = os_amx && (d & (1u << 25));
    __cpuid_count(7, 1, a, b, c, d);
    f.avx_vnni = os_ymm && (a & (1u << 4));
    f.avx512_bf16 = os_zmm && (a & (1u << 5));
  }
  if (!os_ymm) f.fma = f.f16c = false;
  char brand[49] = {};
  if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004) {
    for (unsigned i = 0; i < 3; ++i) {
      __get_cpuid(0x80000002 + i, &a, &b, &c, &d);
      std::memcpy(brand + 16 * i + 0, &a, 4);
      std::memcpy(brand + 16 * i + 4, &b, 4);
      std::memcpy(brand + 16 * i + 8, &c, 4);
      std::memcpy(brand + 16 * i + 12, &d, 4);
    }
  }
  f.brand = brand;
  while (!f.brand.empty() && f.brand.back() == ' ') f.brand.pop_back();
}

// Linux enables the 8 KiB tile data state per process on request (since 5.16); the
// request is process-wide, so making it here, before any kernel runs, covers every
// thread. A refusal leaves qvl on the AVX-512 tier instead of dying at the first tile.
bool RequestAmxPermission() {
#if defined(__x86_64__) && defined(__linux__) && defined(ARCH_REQ_XCOMP_PERM)
  constexpr unsigned long kXfeatureTileData = 18;
  if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, kXfeatureTileData) == 0) return true;
  LogWarn("cpu: the kernel refused AMX tile state (arch_prctl: ", std::strerror(errno),
          "); running the avx512bf16 tier");
#endif
  return false;
}
#endif

#if defined(__aarch64__)
void DetectArm(CpuFeatures& f) {
  f.neon = true;
#if defined(__linux__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  const unsigned long hwcap2 = getauxval(AT_HWCAP2);
#ifdef HWCAP_ASIMDDP
  f.arm_dotprod = hwcap & HWCAP_ASIMDDP;
#endif
#ifdef HWCAP2_BF16
  f.arm_bf16 = hwcap2 & HWCAP2_BF16;
#endif
#ifdef HWCAP2_I8MM
  f.arm_i8mm = hwcap2 & HWCAP2_I8MM;
#endif
  (void)hwcap;
  (void)hwcap2;
#endif
  f.brand = "ARMv8";
}
#endif

void CountCpus(CpuFeatures& f) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    f.logical_cpus = f.physical_cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    return;
  }
  f.logical_cpus = CPU_COUNT(&set);
  const size_t cores = OneCpuPerPhysicalCore().size();
  f.physical_cores = cores == 0 ? f.logical_cpus : static_cast<int>(cores);
}

void ApplyCpuQuota(CpuFeatures& f) {
  f.cpu_quota = CgroupCpuQuota();
  f.compute_cpus = std::min(f.physical_cores, GrantedCpus(f));
}

CpuFeatures Detect() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  DetectX86(f);
  if (f.amx_int8 && f.amx_bf16) f.amx_permitted = RequestAmxPermission();
#elif defined(__aarch64__)
  DetectArm(f);
#endif
  CountCpus(f);
  ApplyCpuQuota(f);
  return f;
}

// Every tier, each preferred over the ones before it on its architecture.
constexpr CpuTier kTiers[] = {CpuTier::kScalar,     CpuTier::kNeon,   CpuTier::kAvx2,
                              CpuTier::kAvxVnni,    CpuTier::kAvx512, CpuTier::kAvx512Vnni,
                              CpuTier::kAvx512Bf16, CpuTier::kAmx};

bool Supports(CpuTier tier, const CpuFeatures& f) {
  switch (tier) {
    case CpuTier::kScalar:
      return true;
    case CpuTier::kAvx2:
      return f.avx2 && f.fma && f.f16c;
    case CpuTier::kAvxVnni:
      return Supports(CpuTier::kAvx2, f) && f.avx_vnni;
    case CpuTier::kAvx512:
      return Supports(CpuTier::kAvx2, f) && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq;
    case CpuTier::kAvx512Vnni:
      return Supports(CpuTier::kAvx512, f) && f.avx512_vnni;
    case CpuTier::kAvx512Bf16:
      return Supports(CpuTier::kAvx512Vnni, f) && f.avx512_bf16;
    case CpuTier::kAmx:
      return Supports(CpuTier::kAvx512Bf16, f) && f.amx_int8 && f.amx_bf16 && f.amx_permitted;
    case CpuTier::kNeon:
      return f.neon;
  }
  return false;
}

}  // namespace

std::vector<int> OneCpuPerPhysicalCore() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  std::set<std::pair<int, int>> seen;  // (package, core)
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    int package = 0, core = cpu;
    std::ifstream(dir + "physical_package_id") >> package;
    std::ifstream(dir + "core_id") >> core;
    if (seen.insert({package, core}).second) cpus.push_back(cpu);
  }
  return cpus;
}

const char* CpuTierName(CpuTier tier) {
  switch (tier) {
    case CpuTier::kScalar:
      return "scalar";
    case CpuTier::kAvx2:
      return "avx2";
    case CpuTier::kAvxVnni:
      return "avxvnni";
    case CpuTier::kAvx512:
      return "avx512";
    case CpuTier::kAvx512Vnni:
      return "avx512vnni";
    case CpuTier::kAvx512Bf16:
      return "avx512bf16";
    case CpuTier::kAmx:
      return "amx";
    case CpuTier::kNeon:
      return "neon";
  }
  return "unknown";
}

const CpuFeatures& GetCpuFeatures() {
  static const CpuFeatures features = Detect();
  return features;
}

bool TierSupported(CpuTier tier) { return Supports(tier, GetCpuFeatures()); }

std::vector<CpuTier> SupportedTiers() {
  std::vector<CpuTier> tiers;
  for (CpuTier t : kTiers) {
    if (TierSupported(t)) tiers.push_back(t);
  }
  return tiers;
}

CpuTier DetectedTier() {
  static const CpuTier best = SupportedTiers().back();
  return best;
}

CpuTier ActiveTier() {
  const char* env = std::getenv("QVL_CPU");
  if (env == nullptr || *env == '\0') return DetectedTier();
  std::string names;
  for (CpuTier t : kTiers) {
    names += StrCat(names.empty() ? "" : ", ", CpuTierName(t));
    if (std::strcmp(env, CpuTierName(t)) != 0) continue;
    if (!TierSupported(t)) {
      Fail(ErrorCode::kInvalidArgument, "QVL_CPU=", env, ": this CPU does not support that tier (",
           "best available: ", CpuTierName(DetectedTier()), ")");
    }
    return t;
  }
  Fail(ErrorCode::kInvalidArgument, "QVL_CPU=", env, ": unknown tier; use one of ", names);
}

int GrantedCpus(const CpuFeatures& f) {
  return f.cpu_quota > 0.0 ? std::max(1, static_cast<int>(std::ceil(f.cpu_quota))) : f.logical_cpus;
}

std::string DescribeCpu() {
  const CpuFeatures& f = GetCpuFeatures();
  std::string s = f.brand.empty() ? std::string("unknown CPU") : f.brand;
  s += StrCat(", ", f.physical_cores, " cores / ", f.logical_cpus, " threads");
  if (f.cpu_quota > 0.0) s += StrCat(", a control group limit of ", f.cpu_quota, " CPUs");
  s += ";";
  const std::pair<bool, const char*> flags[] = {
      {f.avx2, "avx2"},           {f.fma, "fma"},           {f.f16c, "f16c"},
      {f.avx512f, "avx512f"},     {f.avx512bw, "avx512bw"}, {f.avx512vl, "avx512vl"},
      {f.avx512_vnni, "vnni"},    {f.avx512_bf16, "bf16"},  {f.avx_vnni, "avx-vnni"},
      {f.amx_int8, "amx-int8"},   {f.amx_bf16, "amx-bf16"}, {f.neon, "neon"},
      {f.arm_dotprod, "dotprod"}, {f.arm_bf16, "arm-bf16"}, {f.arm_i8mm, "i8mm"}};
  for (const auto& [on, name] : flags) {
    if (on) s += StrCat(" ", name);
  }
  return s;
}

}  // namespace qvl
