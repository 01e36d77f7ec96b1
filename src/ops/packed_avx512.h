// Shared by the AVX-512 packed-format kernels: packed_avx512vnni.cc (Q8, Q4, W8A8 on
// vpdpbusd) and packed_avx512bf16.cc (bf16 on vdpbf16ps). In an anonymous namespace so
// each file keeps its own copy compiled for its flags: the VNNI kernels also serve CPUs
// without AVX512-BF16, where no copy built for it may run.
//
// Two ways through the panels, chosen by the number of rows of x:
//  - Streaming (decode, m <= kStreamRows): the weights are read from memory once and the
//    arithmetic is cheap, so the kernel walks one panel after the other, a single
//    sequential stream per thread, with software prefetches kPrefetchBytes ahead.
//  - Tiles (prefill, vision): register tiles of MR rows of x by NP panels. Weight vectors
//    are loaded once per step and used for all MR rows, x slices are broadcast.
// Both give bit-identical rows (see ops/packed_kernels.h), so a row's result does not
// depend on the path.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "ops/packed_kernels.h"
#include "ops/packed_tiles.h"
#include "ops/simd_avx512.h"
#include "ops/weight_format.h"

namespace qvl::kernels {
namespace {

constexpr int kLanes = kPanelRows;
// Up to this many rows of x share one pass over the weights (decode batches); more rows
// run faster as tiles.
constexpr int kStreamRows = 4;

// The lanes of a panel's `cols` valid columns (cols may be negative or past the panel).
inline __mmask16 ColumnMask(int64_t cols) {
  return avx512::FirstLanes(static_cast<int>(std::clamp<int64_t>(cols, 0, kLanes)));
}

// Stores the valid columns of a tile: acc + bias, or for the quantized formats (with
// `row_scales`) fma(acc, row_scale, bias); added to y when r.accumulate.
template <int MR, int NP>
inline void StoreTile(const __m512 (&acc)[MR][NP], const PanelRange& r, int64_t i0, int64_t p0,
                      const float* row_scales = nullptr) {
  for (int p = 0; p < NP; ++p) {
    const int64_t col = (p0 + p) * kLanes;
    const __mmask16 mask = ColumnMask(r.n - col);
    const __m512 b = r.bias ? _mm512_maskz_loadu_ps(mask, r.bias + col) : _mm512_setzero_ps();
    for (int i = 0; i < MR; ++i) {
      __m512 y = row_scales ? _mm512_fmadd_ps(acc[i][p], _mm512_set1_ps(row_scales[i]), b)
                            : _mm512_add_ps(acc[i][p], b);
      float* dst = r.y + (i0 + i) * r.ldy + col;
      if (r.accumulate) y = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, dst), y);
      _mm512_mask_storeu_ps(dst, mask, y);
    }
  }
}

// Calls fn.template operator()<R>() for R = m, 1 <= m <= kMaxRows.
template <int kMaxRows, typename Fn>
void WithRows(int64_t m, const Fn& fn) {
  [&]<int... R>(std::integer_sequence<int, R...>) {
    ((m == R + 1 ? fn.template operator()<R + 1>() : void()), ...);
  }
  (std::make_integer_sequence<int, kMaxRows>());
}

inline void PrefetchLines(const uint8_t* p, int64_t bytes) {
  for (int64_t line = 0; line < bytes; line += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes + line), _MM_HINT_T0);
  }
}

}  // namespace
}  // namespace qvl::kernels
