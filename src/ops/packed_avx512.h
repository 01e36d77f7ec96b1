// Shared by the AVX-512 packed-format kernels: packed_avx512.cc (bf16 on FMA, int8 on
// vpmaddubsw), packed_avx512vnni.cc (Q8, Q4, W8A8 on vpdpbusd; the int8 tiles are in
// packed_avx512_int8.h) and packed_avx512bf16.cc (bf16 on vdpbf16ps). In an anonymous
// namespace so each file keeps its own copy compiled for its flags: the FMA and VNNI
// kernels also serve CPUs without AVX512-BF16 (or VNNI), where no copy built for it may
// run.
//
// Two ways through the panels, chosen by the number of rows of x:
//  - Streaming (decode, m <= kStreamRows; Q8 and Q4 up to kQuantStreamRows, in
//    packed_avx512_int8.h): the weights are read from memory once and the
//    arithmetic is cheap, so the kernel walks the panels in order (the int8 kernels one
//    at a time, bf16 four at a time so a row's dependent multiply-adds overlap), with
//    software prefetches kPrefetchBytes ahead.
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

// ---- bf16 ------------------------------------------------------------------------------

// A bf16 tile written once over a `Pairs` policy, which says how a K pair of x meets a
// weight vector: X(bits) turns x's pair (two bf16 in 32 bits) into the operand kept per
// row, Add(acc, x, w) adds both products of the pair to the 16 outputs, and kRows x
// kPanels is the tile that fits the 32 registers. Rows i0 .. i0 + MR - 1 against panels
// p0 .. p0 + NP - 1. A lane's sum is one chain of dependent steps through K, so decode
// rows (kPrefetch: few rows, weights streamed from memory) take several panels at once
// too, or one row would wait on the latency of each step.
template <typename Pairs, int MR, int NP, bool kPrefetch>
void Bf16Tile(const uint16_t* x, int64_t i0, const PanelRange& r, int64_t p0) {
  __m512 acc[MR][NP];
  for (int i = 0; i < MR; ++i)
    for (int p = 0; p < NP; ++p) acc[i][p] = _mm512_setzero_ps();
  const uint8_t* w[NP];
  for (int p = 0; p < NP; ++p) w[p] = r.w + (p0 + p) * r.panel_bytes;
  const uint16_t* xr = x + i0 * r.kp;
  for (int64_t t = 0; t < r.kp / 2; ++t) {
    typename Pairs::X xv[MR];
    for (int i = 0; i < MR; ++i) xv[i] = Pairs::LoadX(Load32(xr + i * r.kp + 2 * t));
    for (int p = 0; p < NP; ++p) {
      if constexpr (kPrefetch) PrefetchLines(w[p] + t * 64, 64);
      const __m512i wv = _mm512_load_si512(w[p] + t * 64);
      for (int i = 0; i < MR; ++i) acc[i][p] = Pairs::Add(acc[i][p], xv[i], wv);
    }
  }
  StoreTile<MR, NP>(acc, r, i0, p0);
}

template <typename Pairs>
void PackedBf16(const uint16_t* x, int64_t m, const PanelRange& r) {
  if (m <= kStreamRows) {
    ForTiles<kStreamRows, Pairs::kPanels>(m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) {
      Bf16Tile<Pairs, R, P, true>(x, i, r, p);
    });
    return;
  }
  ForTiles<Pairs::kRows, Pairs::kPanels>(m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) {
    Bf16Tile<Pairs, R, P, false>(x, i, r, p);
  });
}

}  // namespace
}  // namespace qvl::kernels
