// The compute probe's AVX512-VNNI / AVX512-BF16 loops: sixteen independent accumulators
// (enough to cover the instructions' latency on two pipes), no loads in the loop. Built
// with the VNNI flags only, for the tier without AVX512-BF16 too, so vdpbf16ps is written
// in asm; only the tiers with AVX512-BF16 call its loop.
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
  const __m512 a = _mm512_castsi512_ps(_mm512_set1_epi16(0x3f80)), b = a;
  const __m512 sum = RunChains<kAccumulators>(reps, _mm512_setzero_ps(), [&](__m512 acc) {
    asm("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
    return acc;
  });
  __asm__ volatile("" : : "v"(sum));
  return 2.0 * 32 * kAccumulators * static_cast<double>(reps);
}

}  // namespace qvl::kernels
