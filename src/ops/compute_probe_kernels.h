// Register-only loops of the compute probe (internal to ops/): each runs `reps` steps and
// returns the operations it did (a multiply-add counts two).
#pragma once

#include <cstdint>

namespace qvl::kernels {

#if defined(__x86_64__)
double AmxInt8Loop(int64_t reps);
double AmxBf16Loop(int64_t reps);
double VnniInt8Loop(int64_t reps);
double VnniBf16Loop(int64_t reps);
double Avx2Int8Loop(int64_t reps);
double Avx2F32Loop(int64_t reps);
#endif

}  // namespace qvl::kernels
