// AMX flash-attention kernels for bf16 keys and values. The packed group layouts
// (KvGroupLayout) are AMX B tiles as they lie: a bf16 key group's 32-dimension slice is
// 16 rows (dimension pairs) of 16 tokens x 2, a value group's 16-dimension slice 8 rows
// (token pairs) of 16 dimensions x 2. So QK^T is tdpbf16ps of 16 query rows with a key
// slice, written straight to the score block, and PV is tdpbf16ps of 16 probability rows
// (16 keys deep) with a value slice, summed over the block's groups in the tile and
// added to the rescaled output rows with AVX-512. Head dims that are not a multiple of
// 32 (QK) or 16 (PV) take the AVX512-BF16 kernels, so one head dim always runs one way
// and a row's result does not depend on how many rows share the call.
#include <immintrin.h>

#include "ops/amx_tiles.h"
#include "ops/attention_kernels.h"

namespace qvl::kernels {
namespace {

constexpr int kTileRows = 16;

const AttentionKernels& Vnni() {
  static const AttentionKernels kernels = Avx512Bf16AttentionKernels();
  return kernels;
}

// Tiles: 0 / 1 sums of a full / the last row tile; 2 / 3 query slices and 4 / 5
// probability slices for them; 6 a key slice, 7 a value slice. Depends only on the rows
// of the last row tile, so QK and PV of a block share it.
amx::TileConfig Config(int rows) {
  const int tail = rows % kTileRows == 0 ? kTileRows : rows % kTileRows;
  amx::TileConfig c;
  c.Set(0, kTileRows, 64);
  c.Set(1, tail, 64);
  c.Set(2, kTileRows, 64);
  c.Set(3, tail, 64);
  c.Set(4, kTileRows, 2 * kKeyGroup);
  c.Set(5, tail, 2 * kKeyGroup);
  c.Set(6, kTileRows, 64);
  c.Set(7, kKeyGroup / 2, 64);
  return c;
}

// GCC's tile intrinsics take the tile number as a literal (they paste it into the
// instruction), so a full row tile (tiles 0, 2, 4) and the last one (1, 3, 5) are
// written out as two branches.

// QK^T of one row tile against every group, into s.
void QkRowTile(bool full, const uint16_t* q, int64_t ldq, const uint16_t* const* kg, int n_groups,
               int d, float* s, int64_t lds) {
  for (int g = 0; g < n_groups; ++g) {
    const uint16_t* key = kg[g];
    if (full) {
      _tile_zero(0);
      for (int c = 0; c < d / 32; ++c) {
        _tile_loadd(2, q + c * 32, ldq * 2);
        _tile_loadd(6, key + c * 16 * 2 * kKeyGroup, 64);
        _tile_dpbf16ps(0, 2, 6);
      }
      _tile_stored(0, s + g * kKeyGroup, lds * 4);
    } else {
      _tile_zero(1);
      for (int c = 0; c < d / 32; ++c) {
        _tile_loadd(3, q + c * 32, ldq * 2);
        _tile_loadd(6, key + c * 16 * 2 * kKeyGroup, 64);
        _tile_dpbf16ps(1, 3, 6);
      }
      _tile_stored(1, s + g * kKeyGroup, lds * 4);
    }
  }
}

void QkBf16(const uint16_t* q, int64_t ldq, int rows, const uint16_t* const* kg, int n_groups,
            int d, float* s, int64_t lds) {
  if (d % 32 != 0) {
    Vnni().qk_bf16(q, ldq, rows, kg, n_groups, d, s, lds);
    return;
  }
  amx::UseTiles(Config(rows));
  for (int r = 0; r < rows; r += kTileRows) {
    QkRowTile(r + kTileRows <= rows, q + r * ldq, ldq, kg, n_groups, d, s + r * lds, lds);
  }
}

// o = o * alpha + P V for `rows` rows (<= 16) of one row tile, 16 dimensions at a time.
// Two groups that lie one after the other (a contiguous panel, or neighbouring slots of
// a cache page) are one 32-key slice: the value rows of their 16 token pairs follow each
// other, so one full-depth tdpbf16ps takes both.
void PvRowTile(bool full, const uint16_t* p, int64_t ldp, int rows, const uint16_t* const* vg,
               int n_groups, int d, const float* alpha, float* o, int64_t ldo) {
  alignas(64) float sums[kTileRows * 16];
  const int64_t ldv = 2 * d * 2;
  for (int c0 = 0; c0 < d; c0 += 16) {
    if (full) {
      _tile_zero(0);
    } else {
      _tile_zero(1);
    }
    for (int g = 0; g < n_groups;) {
      const uint16_t* v = vg[g] + 2 * c0;
      const bool pair = g + 1 < n_groups && vg[g + 1] == vg[g] + kKeyGroup * d;
      if (full && pair) {
        _tile_loadd(2, p + g * kKeyGroup, ldp * 2);
        _tile_loadd(6, v, ldv);
        _tile_dpbf16ps(0, 2, 6);
      } else if (pair) {
        _tile_loadd(3, p + g * kKeyGroup, ldp * 2);
        _tile_loadd(6, v, ldv);
        _tile_dpbf16ps(1, 3, 6);
      } else if (full) {
        _tile_loadd(4, p + g * kKeyGroup, ldp * 2);
        _tile_loadd(7, v, ldv);
        _tile_dpbf16ps(0, 4, 7);
      } else {
        _tile_loadd(5, p + g * kKeyGroup, ldp * 2);
        _tile_loadd(7, v, ldv);
        _tile_dpbf16ps(1, 5, 7);
      }
      g += pair ? 2 : 1;
    }
    if (full) {
      _tile_stored(0, sums, 64);
    } else {
      _tile_stored(1, sums, 64);
    }
    for (int r = 0; r < rows; ++r) {
      float* dst = o + r * ldo + c0;
      _mm512_storeu_ps(dst, _mm512_fmadd_ps(_mm512_loadu_ps(dst), _mm512_set1_ps(alpha[r]),
                                            _mm512_load_ps(sums + r * 16)));
    }
  }
}

void PvBf16(const uint16_t* p, int64_t ldp, int rows, const uint16_t* const* vg, int n_groups,
            int d, const float* alpha, float* o, int64_t ldo) {
  if (d % 16 != 0) {
    Vnni().pv_bf16(p, ldp, rows, vg, n_groups, d, alpha, o, ldo);
    return;
  }
  amx::UseTiles(Config(rows));
  for (int r = 0; r < rows; r += kTileRows) {
    const bool full = r + kTileRows <= rows;
    PvRowTile(full, p + r * ldp, ldp, full ? kTileRows : rows - r, vg, n_groups, d, alpha + r,
              o + r * ldo, ldo);
  }
}

}  // namespace

AttentionKernels AmxAttentionKernels() {
  AttentionKernels k = Vnni();
  k.qk_bf16 = QkBf16;
  k.pv_bf16 = PvBf16;
  return k;
}

}  // namespace qvl::kernels
