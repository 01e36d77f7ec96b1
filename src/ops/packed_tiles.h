// Tiling of the packed-format kernels (internal to the ops/packed_*.cc tiers).
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>

#include "ops/weight_pack_internal.h"

namespace qvl::kernels {

// How far ahead of its reads a decode kernel prefetches the weight stream (4 KiB measured
// best on Zen 4; the hardware prefetcher does most of the work).
constexpr int64_t kPrefetchBytes = 4096;

// Prefetches, kPrefetchBytes ahead, block blk's share of a two-block Q8 / Q4 weight group:
// block 0 the first block's codes, block 1 the rest, scales included, so a streaming
// tile's prefetches spread through its loop.
template <bool kQ4>
inline void PrefetchBlockShare(const uint8_t* group, int blk) {
  constexpr int64_t kHalf = (kQ4 ? pack::kQ4ScaleOffset : pack::kQ8ScaleOffset) / 2;
  constexpr int64_t kEnd = kQ4 ? pack::kQ4GroupBytes : pack::kQ8GroupBytes;
  for (int64_t line = blk * kHalf; line < (blk == 0 ? kHalf : kEnd); line += 64)
    __builtin_prefetch(group + kPrefetchBytes + line, 0, 3);
}

// The 4 bytes at p (an x slice to broadcast), unaligned.
inline int32_t Load32(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Calls tile.template operator()<R, P>(i, p) for row tiles of up to MR rows inside panel
// groups of up to NP panels. Panel groups are the outer loop, so a group's weights stay
// in cache while every row of x passes over them.
template <int MR, int NP, typename Tile>
void ForTiles(int64_t m, int64_t panels, const Tile& tile) {
  auto rows = [&]<int P>(int64_t p) {
    int64_t i = 0;
    for (; i + MR <= m; i += MR) tile.template operator()<MR, P>(i, p);
    [&]<int... R>(std::integer_sequence<int, R...>) {
      ((m - i == R + 1 ? tile.template operator()<R + 1, P>(i, p) : void()), ...);
    }
    (std::make_integer_sequence<int, MR - 1>());
  };
  int64_t p = 0;
  for (; p + NP <= panels; p += NP) rows.template operator()<NP>(p);
  [&]<int... P>(std::integer_sequence<int, P...>) {
    ((panels - p == P + 1 ? rows.template operator()<P + 1>(p) : void()), ...);
  }
  (std::make_integer_sequence<int, NP - 1>());
}

}  // namespace qvl::kernels
