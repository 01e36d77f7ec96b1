// The unnormalized Walsh-Hadamard transform over consecutive blocks of a row, the
// rotation of the kW8A8 format (ops/weight_format.h). Stage h (1, 2, 4, ... block / 2)
// replaces each pair (x[j], x[j + h]) inside a group of 2h by (x[j] + x[j + h], x[j] -
// x[j + h]); each output is one addition or subtraction of the same two floats on every
// tier, so the SIMD tiers, which run the stages below their vector width in registers,
// give this loop's bits.
#pragma once

#include <cstdint>

namespace qvl {

// The stages h >= `from` only: what is left after a tier ran the smaller ones in registers.
inline void HadamardStagesFrom(float* x, int64_t n, int64_t block, int64_t from) {
  for (int64_t h = from; h < block; h *= 2) {
    for (int64_t g = 0; g < n; g += 2 * h) {
      for (int64_t j = g; j < g + h; ++j) {
        const float a = x[j], b = x[j + h];
        x[j] = a + b;
        x[j + h] = a - b;
      }
    }
  }
}

// x[0, n) in place, n a multiple of `block`, `block` a power of two.
inline void HadamardBlocks(float* x, int64_t n, int64_t block) {
  HadamardStagesFrom(x, n, block, 1);
}

}  // namespace qvl
