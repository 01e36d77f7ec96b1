// The compute probe's AVX512-VNNI / AVX512-BF16 loops: eight independent accumulators
// (enough to cover the instructions' latency on two pipes), no loads in the loop.
#include <immintrin.h>

#include "ops/compute_probe_kernels.h"

namespace qvl::kernels {
namespace {

constexpr int kAccumulators = 16;

}  // namespace

double VnniInt8Loop(int64_t reps) {
  const __m512i a = _mm512_set1_epi8(1), b = _mm512_set1_epi8(2);
  const __m512i sum = RunChains<kAccumulators>(
      reps, _mm512_setzero_si512(), [&](__m512i acc) { return _mm512_dpbusd_epi32(acc, a, b); });
  __asm__ volatile("" : : "v"(sum));
  return 2.0 * 64 * kAccumulators * static_cast<double>(reps);
}

double VnniBf16Loop(int64_t reps) {
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = a;
  const __m512 sum = RunChains<kAccumulators>(
      reps, _mm512_setzero_ps(), [&](__m512 acc) { return _mm512_dpbf16_ps(acc, a, b); });
  __asm__ volatile("" : : "v"(sum));
  return 2.0 * 32 * kAccumulators * static_cast<double>(reps);
}

}  // namespace qvl::kernels
