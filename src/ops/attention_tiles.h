// Tiling of the flash-attention block kernels (internal to the ops/attention_*.cc
// tiers): query rows in tiles of kRows, the rest in one tile so keys and values are read
// once (decode has 1-2 rows per group), and the step's key groups as a template
// parameter NG = n_groups (1 .. kMaxGroups), so the tiles' loops unroll over them.
#pragma once

#include <utility>

#include "ops/attention_kernels.h"

// Put before each loop over a tile's rows, groups or column vectors: GCC 12 unrolls it
// early enough to keep the tile's accumulator arrays in registers. Left to its default,
// it copies them between registers on every step of the enclosing loop over dims or keys
// (a third of the int8 q.k time).
#define QVL_UNROLL_TILE _Pragma("GCC unroll 16")

namespace qvl::kernels {
namespace {

// Calls fn.template operator()<N>() for N = n, 1 <= n <= kMax.
template <int kMax, typename Fn>
void WithCount(int n, const Fn& fn) {
  [&]<int... N>(std::integer_sequence<int, N...>) {
    ((n == N + 1 ? fn.template operator()<N + 1>() : void()), ...);
  }
  (std::make_integer_sequence<int, kMax>());
}

// Calls tile.template operator()<MR, NG>(r) for the row tiles of a q.k block step.
template <int kRows, typename Tile>
void ForQkTiles(int rows, int n_groups, const Tile& tile) {
  WithCount<kMaxGroups>(n_groups, [&]<int NG>() {
    int r = 0;
    for (; r + kRows <= rows; r += kRows) tile.template operator()<kRows, NG>(r);
    if (r < rows) {
      WithCount<kRows - 1>(rows - r, [&]<int MR>() { tile.template operator()<MR, NG>(r); });
    }
  });
}

// Calls tile.template operator()<MR, NC, NG>(r, c0) for the tiles of a p.v block step:
// output columns in chunks of 4 vectors of kLanes dims from c0, the rest (1 .. 3
// vectors, the last one partial) in one chunk.
template <int kRows, int kLanes, typename Tile>
void ForPvTiles(int rows, int n_groups, int d, const Tile& tile) {
  WithCount<kMaxGroups>(n_groups, [&]<int NG>() {
    auto row_tile = [&]<int MR>(int r) {
      int c0 = 0;
      for (; c0 + 4 * kLanes <= d; c0 += 4 * kLanes) tile.template operator()<MR, 4, NG>(r, c0);
      if (c0 < d) {
        WithCount<3>((d - c0 + kLanes - 1) / kLanes,
                     [&]<int NC>() { tile.template operator()<MR, NC, NG>(r, c0); });
      }
    };
    int r = 0;
    for (; r + kRows <= rows; r += kRows) row_tile.template operator()<kRows>(r);
    if (r < rows) {
      WithCount<kRows - 1>(rows - r, [&]<int MR>() { row_tile.template operator()<MR>(r); });
    }
  });
}

}  // namespace
}  // namespace qvl::kernels
