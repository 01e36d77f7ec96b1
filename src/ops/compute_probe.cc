#include "ops/compute_probe.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <vector>

#include "base/cpu_features.h"
#include "ops/compute_probe_kernels.h"

namespace qvl {
#if defined(__x86_64__)
namespace {

using Loop = double (*)(int64_t reps);

// Every thread runs `loop` at once; the best of three passes, in 1e12 operations/s.
double Measure(ThreadPool& pool, Loop loop, int64_t reps) {
  std::vector<double> ops(pool.size());
  double best = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    pool.RunOnAll([&](int thread) { ops[thread] = loop(reps); });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double total = std::accumulate(ops.begin(), ops.end(), 0.0);
    if (seconds > 0) best = std::max(best, total / seconds / 1e12);
  }
  return best;
}

}  // namespace
#endif

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
    case CpuTier::kAvx512Vnni:
      // The tier's bf16 kernels widen to f32 and multiply-add on 512 bits.
      p.unit = "avx512 vnni; bf16 as avx512 fma";
      p.int8_tops = Measure(pool, kernels::VnniInt8Loop, 1000000);
      p.bf16_tflops = Measure(pool, kernels::Avx512F32Loop, 1000000);
      break;
    case CpuTier::kAvxVnni:
      p.unit = "avx-vnni; bf16 as avx2 fma";
      p.int8_tops = Measure(pool, kernels::AvxVnniInt8Loop, 1000000);
      p.bf16_tflops = Measure(pool, kernels::Avx2F32Loop, 1000000);
      break;
    case CpuTier::kAvx512:
      p.unit = "avx512bw; bf16 as avx512 fma";
      p.int8_tops = Measure(pool, kernels::Avx512BwInt8Loop, 1000000);
      p.bf16_tflops = Measure(pool, kernels::Avx512F32Loop, 1000000);
      break;
    case CpuTier::kAvx2:
      p.unit = "avx2";
      p.int8_tops = Measure(pool, kernels::Avx2Int8Loop, 1000000);
      p.bf16_tflops = Measure(pool, kernels::Avx2F32Loop, 1000000);
      break;
    case CpuTier::kScalar:
    case CpuTier::kNeon:
      break;
  }
#else
  (void)pool;
#endif
  return p;
}

}  // namespace qvl
