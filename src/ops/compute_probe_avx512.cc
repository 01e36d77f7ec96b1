// The compute probe's AVX-512 loops: sixteen independent accumulators (enough to cover
// the instructions' latency on two pipes), no loads in the loop. Built with the AVX-512
// F/BW/VL/DQ flags only, for Skylake-X too, so vpdpbusd and vdpbf16ps are written in asm;
// only the tiers with AVX512-VNNI, or AVX512-BF16, call their loops.
#include <immintrin.h>

#include "ops/compute_probe_kernels.h"

namespace qvl::kernels {
namespace {

constexpr int kAccumulators = 16;

}  // namespace

double VnniInt8Loop(int64_t reps) {
  const __m512i a = _mm512_set1_epi8(1), b = _mm512_set1_epi8(2);
  const __m512i sum = RunChains<kAccumulators>(reps, _mm512_setzero_si512(), [&](__m512i acc) {
    asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
    return acc;
  });
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

// The avx512 tier's int8 products (Skylake-X, no VNNI): a vpmaddubsw + vpmaddwd pair
// counted as 64 multiply-adds, as the AVX2 loop counts its pair as 32.
double Avx512BwInt8Loop(int64_t reps) {
  const __m512i b = _mm512_set1_epi8(1), ones = _mm512_set1_epi16(1);
  const __m512i sum = RunChains<kAccumulators>(reps, _mm512_set1_epi8(2), [&](__m512i acc) {
    return _mm512_madd_epi16(_mm512_maddubs_epi16(acc, b), ones);
  });
  __asm__ volatile("" : : "v"(sum));
  return 2.0 * 64 * kAccumulators * static_cast<double>(reps);
}

// vfmadd on 16 floats: the rate of the bf16 kernels that widen pairs to float on 512 bits
// (the avx512 and avx512vnni tiers).
double Avx512F32Loop(int64_t reps) {
  const __m512 a = _mm512_set1_ps(1.0f), b = _mm512_set1_ps(0.5f);
  const __m512 sum = RunChains<kAccumulators>(
      reps, _mm512_setzero_ps(), [&](__m512 acc) { return _mm512_fmadd_ps(acc, a, b); });
  __asm__ volatile("" : : "v"(sum));
  return 2.0 * 16 * kAccumulators * static_cast<double>(reps);
}

}  // namespace qvl::kernels
