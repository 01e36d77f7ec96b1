// The compute probe's AVX2 loops. AVX2 has no int8 dot product into int32: the int8
// kernels (ops/packed_avx2.cc, ops/attention_int8_avx2.cc) spend a vpmaddubsw and a
// vpmaddwd per 32 byte products, which share the multiply pipes, so the int8 loop counts
// one such pair as 32 multiply-adds. bf16 is widened to f32 on this tier, so its rate is
// that of vfmadd on 8 floats. The AVX-VNNI tier's int8 loop is here too, in asm, so
// nothing else in the file can be compiled to need AVX-VNNI.
#include <immintrin.h>

#include "ops/compute_probe_kernels.h"

namespace qvl::kernels {
namespace {

// Enough independent chains to cover each loop's latency on two pipes (vfmadd and
// vpdpbusd need more than 8: 0.80 against 0.87 TOP/s on Zen 5), and few enough that the
// chains and constants stay in 16 registers.
constexpr int kInt8Chains = 8;
constexpr int kF32Chains = 12;
constexpr int kVnniChains = 12;

}  // namespace

double Avx2Int8Loop(int64_t reps) {
  const __m256i b = _mm256_set1_epi8(1), ones = _mm256_set1_epi16(1);
  // Each step is the kernels' pair: bytes x bytes to int16 pairs, then pairs to int32.
  const __m256i sum = RunChains<kInt8Chains>(reps, _mm256_set1_epi8(2), [&](__m256i acc) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(acc, b), ones);
  });
  __asm__ volatile("" : : "x"(sum));
  return 2.0 * 32 * kInt8Chains * static_cast<double>(reps);
}

double AvxVnniInt8Loop(int64_t reps) {
  const __m256i a = _mm256_set1_epi8(1), b = _mm256_set1_epi8(2);
  const __m256i sum = RunChains<kVnniChains>(reps, _mm256_setzero_si256(), [&](__m256i acc) {
    asm("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc) : "x"(a), "x"(b));
    return acc;
  });
  __asm__ volatile("" : : "x"(sum));
  return 2.0 * 32 * kVnniChains * static_cast<double>(reps);
}

double Avx2F32Loop(int64_t reps) {
  const __m256 a = _mm256_set1_ps(1.0f), b = _mm256_set1_ps(0.5f);
  const __m256 sum = RunChains<kF32Chains>(reps, _mm256_setzero_ps(),
                                           [&](__m256 acc) { return _mm256_fmadd_ps(acc, a, b); });
  __asm__ volatile("" : : "x"(sum));
  return 2.0 * 8 * kF32Chains * static_cast<double>(reps);
}

}  // namespace qvl::kernels
