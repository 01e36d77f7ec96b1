// Register-only loops of the compute probe (internal to ops/): each runs `reps` steps and
// returns the operations it did (a multiply-add counts two).
#pragma once

#include <cstdint>

namespace qvl::kernels {

// kChains independent chains of `step` from `start`, `reps` steps each, with no loads: the
// empty asm keeps the compiler from folding the loop and the chains in registers ("v"
// is any vector register of the file's instruction set).
template <int kChains, typename Acc, typename Step>
Acc RunChains(int64_t reps, Acc start, const Step& step) {
  Acc acc[kChains];
#pragma GCC unroll 16
  for (Acc& a : acc) a = start;
  for (int64_t i = 0; i < reps; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kChains; ++k) {
      acc[k] = step(acc[k]);
      __asm__ volatile("" : "+v"(acc[k]));
    }
  }
  Acc sum = acc[0];
  for (int k = 1; k < kChains; ++k) sum = step(sum);
  return sum;
}

#if defined(__x86_64__)
double AmxInt8Loop(int64_t reps);
double AmxBf16Loop(int64_t reps);
double VnniInt8Loop(int64_t reps);
double VnniBf16Loop(int64_t reps);
double Avx512F32Loop(int64_t reps);
double Avx512BwInt8Loop(int64_t reps);
double Avx2Int8Loop(int64_t reps);
double AvxVnniInt8Loop(int64_t reps);
double Avx2F32Loop(int64_t reps);
#endif

}  // namespace qvl::kernels
