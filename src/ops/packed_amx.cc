// Packed-format kernels for AMX (Sapphire Rapids and later).
//
// BF16Packed runs on tiles: a panel's 32-K slice is, as packed, an AMX B tile (a 64-byte
// vector holds one K pair of all 16 columns), so tdpbf16ps multiplies 16 rows of x with
// it; the float sums stay in tiles, spilled to L1 between passes over 256 K (an exact
// round trip). Its rounding differs from vdpbf16ps, so every row count runs on tiles
// (decode included) and a row's result does not depend on its batch.
//
// Q8 / Q4 and W8A8 keep the AVX512-VNNI kernels. Q8 / Q4's contract (ops/packed_kernels.h)
// needs each 32-K block's exact int32 sum before the block's scales: on tiles that is one
// tdpbsud at half depth per block, whose 16 x 16 sums leave the tile for an AVX-512
// epilogue. Measured
// on a Xeon with AMX (2 cores, M = 512, K = 2048, N = 6144): 18.4 ms against 14.3 ms for
// vpdpbusd, because tile stores and their reloads do not overlap the vector epilogue, which
// alone costs as much as the VNNI kernel's whole block. W8A8 has no per-block scales and
// its layout is the tile layout (a panel's 64-K step is an int8 B tile, tdpbsud's unsigned
// operand): its tile kernel is still to be written and measured on an AMX machine.
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "ops/amx_tiles.h"
#include "ops/packed_kernels.h"
#include "ops/weight_format.h"

namespace qvl::kernels {
namespace {

using amx::TileConfig;

constexpr int kTileRows = 16;
constexpr int kLanes = kPanelRows;

inline __mmask16 ColumnMask(int64_t cols) {
  if (cols <= 0) return 0;
  return cols >= kLanes ? __mmask16(0xffff) : __mmask16((1u << cols) - 1);
}

// ---- bf16 ------------------------------------------------------------------------------

// Tiles: 0-3 the float sums of two row tiles by two panels, 4, 5 the row tiles' x, 6, 7
// the panels' weights; rows0 / rows1 rows in the two row tiles (rows1 may be 0).
TileConfig Bf16Config(int rows0, int rows1) {
  TileConfig c;
  c.Set(0, rows0, 64);
  c.Set(1, rows0, 64);
  c.Set(4, rows0, 64);
  if (rows1 > 0) {
    c.Set(2, rows1, 64);
    c.Set(3, rows1, 64);
    c.Set(5, rows1, 64);
  }
  c.Set(6, 16, 64);
  c.Set(7, 16, 64);
  return c;
}

// Stores `rows` rows of a tile's sums (plus bias, plus y when accumulating) to panel p.
void StoreSums(const float* sums, int rows, const PanelRange& r, int64_t i0, int64_t p) {
  const int64_t col = p * kLanes;
  const __mmask16 mask = ColumnMask(r.n - col);
  const __m512 b = r.bias ? _mm512_maskz_loadu_ps(mask, r.bias + col) : _mm512_setzero_ps();
  for (int i = 0; i < rows; ++i) {
    __m512 y = _mm512_add_ps(_mm512_load_ps(sums + i * kLanes), b);
    float* dst = r.y + (i0 + i) * r.ldy + col;
    if (r.accumulate) y = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, dst), y);
    _mm512_mask_storeu_ps(dst, mask, y);
  }
}

// x rows as tiles load them: per 32-K slice, the 64-byte slices of row tile 0, then of
// row tile 1. Rows of x lie kp * 2 bytes apart, a multiple of 4 KiB in the model's shapes,
// so a tile loaded from them in place would put its 16 rows in one L1 set.
constexpr int64_t kSliceBytes = 2 * kTileRows * 64;

void PackRows(const uint16_t* x, int64_t kp, int rows, uint8_t* a) {
  for (int j = 0; j < rows; ++j) {
    const uint8_t* src = reinterpret_cast<const uint8_t*>(x + j * kp);
    uint8_t* dst = a + j / kTileRows * (kTileRows * 64) + j % kTileRows * 64;
    for (int64_t kc = 0; kc < kp / 32; ++kc) {
      _mm512_store_si512(dst + kc * kSliceBytes, _mm512_loadu_si512(src + kc * 64));
    }
  }
}

// 32-K slices per pass over a pair of row tiles: the pair's x slices (16 KiB) stay in L1
// while every panel pair of the call passes, so only the weights come from L2.
constexpr int64_t kPassSlices = 8;

// Slices [kc0, kc1) of rows [i0, i0 + rows0 + rows1), packed at a, against panels p and,
// with two_panels, p + 1. The four sum tiles start from zero at slice 0, else from
// `partial` (4 x 16 x 16 floats), and go back there, or to y after the last slice.
void Bf16Tile(const uint8_t* a, int64_t i0, int rows0, int rows1, const PanelRange& r, int64_t p,
              bool two_panels, int64_t kc0, int64_t kc1, float* partial) {
  const uint8_t* w0 = r.w + p * r.panel_bytes;
  const uint8_t* w1 = w0 + r.panel_bytes;
  constexpr int kTile = kTileRows * kLanes;
  if (kc0 == 0) {
    _tile_zero(0);
    _tile_zero(1);
    if (rows1 > 0) {
      _tile_zero(2);
      _tile_zero(3);
    }
  } else {
    _tile_loadd(0, partial, 64);
    _tile_loadd(1, partial + kTile, 64);
    if (rows1 > 0) {
      _tile_loadd(2, partial + 2 * kTile, 64);
      _tile_loadd(3, partial + 3 * kTile, 64);
    }
  }
  for (int64_t kc = kc0; kc < kc1; ++kc) {
    _tile_loadd(4, a + kc * kSliceBytes, 64);
    _tile_loadd(6, w0 + kc * 1024, 64);
    _tile_dpbf16ps(0, 4, 6);
    if (two_panels) {
      _tile_loadd(7, w1 + kc * 1024, 64);
      _tile_dpbf16ps(1, 4, 7);
    }
    if (rows1 > 0) {
      _tile_loadd(5, a + kc * kSliceBytes + kTileRows * 64, 64);
      _tile_dpbf16ps(2, 5, 6);
      if (two_panels) _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, partial, 64);
  _tile_stored(1, partial + kTile, 64);
  if (rows1 > 0) {
    _tile_stored(2, partial + 2 * kTile, 64);
    _tile_stored(3, partial + 3 * kTile, 64);
  }
  if (kc1 < r.kp / 32) return;
  StoreSums(partial, rows0, r, i0, p);
  if (two_panels) StoreSums(partial + kTile, rows0, r, i0, p + 1);
  if (rows1 > 0) {
    StoreSums(partial + 2 * kTile, rows1, r, i0 + rows0, p);
    if (two_panels) StoreSums(partial + 3 * kTile, rows1, r, i0 + rows0, p + 1);
  }
}

void PackedBf16(const uint16_t* x, int64_t m, const PanelRange& r) {
  thread_local std::vector<uint8_t> buffer;
  const size_t need = static_cast<size_t>(r.kp / 32 * kSliceBytes + 64);
  if (buffer.size() < need) buffer.resize(need);
  uint8_t* a = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(buffer.data()) + 63) &
                                          ~uintptr_t{63});
  thread_local std::vector<float> partials;
  const size_t pairs_of_panels = static_cast<size_t>((r.panels + 1) / 2);
  if (partials.size() < pairs_of_panels * 4 * kTileRows * kLanes + 16) {
    partials.resize(pairs_of_panels * 4 * kTileRows * kLanes + 16);
  }
  float* partial = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(partials.data()) + 63) &
                                            ~uintptr_t{63});
  const int64_t slices = r.kp / 32;
  auto run = [&](int64_t i0, int rows0, int rows1) {
    PackRows(x + i0 * r.kp, r.kp, rows0 + rows1, a);
    for (int64_t kc0 = 0; kc0 < slices; kc0 += kPassSlices) {
      const int64_t kc1 = std::min(slices, kc0 + kPassSlices);
      for (int64_t p = 0; p < r.panels; p += 2) {
        Bf16Tile(a, i0, rows0, rows1, r, p, p + 1 < r.panels, kc0, kc1,
                 partial + p / 2 * 4 * kTileRows * kLanes);
      }
    }
  };
  const int64_t pairs = m / (2 * kTileRows) * (2 * kTileRows);
  if (pairs > 0) {
    amx::UseTiles(Bf16Config(kTileRows, kTileRows));
    for (int64_t i = 0; i < pairs; i += 2 * kTileRows) run(i, kTileRows, kTileRows);
  }
  const int rest = static_cast<int>(m - pairs);
  if (rest > 0) {
    const int rows0 = std::min(rest, kTileRows);
    amx::UseTiles(Bf16Config(rows0, rest - rows0));
    run(pairs, rows0, rest - rows0);
  }
}

}  // namespace

PackedKernels AmxPackedKernels() {
  PackedKernels k = Avx512Bf16PackedKernels();
  k.bf16 = PackedBf16;
  k.bf16_rows = kTileRows;
  return k;
}

}  // namespace qvl::kernels
