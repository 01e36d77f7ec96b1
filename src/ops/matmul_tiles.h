// Tiling of the MatMul tile kernels (internal to the ops/matmul_*.cc tiers): register
// tiles of 4 rows of x by 2 rows of w, and for the last rows of x, 1 by 4.
#pragma once

#include <cstdint>

namespace qvl::kernels {
namespace {

// Calls tile.template operator()<MR, NR>(i, j) for the tiles of y [m, n] at row i,
// column j. A tile's shape does not change the arithmetic of an output.
template <typename Tile>
void ForDotTiles(int64_t m, int64_t n, const Tile& tile) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    int64_t j = 0;
    for (; j + 2 <= n; j += 2) tile.template operator()<4, 2>(i, j);
    if (j < n) tile.template operator()<4, 1>(i, j);
  }
  for (; i < m; ++i) {
    int64_t j = 0;
    for (; j + 4 <= n; j += 4) tile.template operator()<1, 4>(i, j);
    for (; j < n; ++j) tile.template operator()<1, 1>(i, j);
  }
}

}  // namespace
}  // namespace qvl::kernels
