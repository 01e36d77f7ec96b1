#include "ops/compute_probe.h"

#include <atomic>
#include <chrono>

#include "base/cpu_features.h"
#include "ops/compute_probe_kernels.h"

namespace qvl {
namespace {

using Loop = double (*)(int64_t reps);

// Every thread runs `loop` at once; the best of three passes, in 1e12 operations/s.
double Measure(ThreadPool& pool, Loop loop, int64_t reps) {
  double best = 0;
  for (int pass = 0; pass < 3; ++pass) {
    std::atomic<double> ops{0};
    const auto start = std::chrono::steady_clock::now();
    pool.RunOnAll([&](int) {
      const double done = loop(reps);
      double seen = ops.load();
      while (!ops.compare_exchange_weak(seen, seen + done)) {
      }
    });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > 0 && ops / seconds / 1e12 > best) best = ops / seconds / 1e12;
  }
  return best;
}

}  // namespace

ComputeProbe MeasureComputePeak(ThreadPool& pool) {
  ComputeProbe p;
#if defined(__x86_64__)
  switch (ActiveTier()) {
    case CpuTier::kAmx:
      p.unit = "amx tiles";
      p.int8_tops = Measure(pool, kernels::AmxInt8Loop, 200000);
      p.bf16_tflops = Measure(pool, kernels::AmxBf16Loop, 200000);
      break;
    case CpuTier::kAvx512Bf16:
      p.unit = "avx512 vnni";
      p.int8_tops = Measure(pool, kernels::VnniInt8Loop, 1000000);
      p.bf16_tflops = Measure(pool, kernels::VnniBf16Loop, 1000000);
      break;
    case CpuTier::kScalar:
    case CpuTier::kAvx2:
    case CpuTier::kAvx512:
    case CpuTier::kNeon:
      break;
  }
#else
  (void)pool;
#endif
  return p;
}

}  // namespace qvl
