// The AVX-512 int8 matmul kernels (Q8, Q4, W8A8), written once over a `Products` policy
// that says how 4-byte groups of weight codes meet x codes, and instantiated in
// packed_avx512vnni.cc (vpdpbusd on the unsigned codes) and packed_avx512.cc (AVX-512BW's
// vpmaddubsw on the signed values, for Skylake-X). A policy has:
//   Start(corr)     the int32 sum a block (Q8, Q4) or row (W8A8) starts from, given the x
//                   rows' correction -128 * sum of their codes;
//   Weights(codes)  the packed unsigned codes (value + 128) as Dot's weight operand;
//   kQ4Table        the 16 Q4 levels as Dot's weight operand;
//   Dot(acc, w, x)  acc += the four-byte dot products of w with x's codes, per lane.
// Both reach the same exact integer sums, so every tier's results agree bit for bit. In
// an anonymous namespace (included by files built with different flags).
//
// Per block and output the Q8 / Q4 epilogue is cvt + scalef + fma; with vpdpbusd only
// the fma shares the two dot-product pipes (cvt and scalef run on the other two), so
// tiles can reach 8 / 9 of the vpdpbusd peak (8 / 10 if a float scale per block had to be
// multiplied in).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ops/packed_avx512.h"
#include "ops/packed_kernels.h"
#include "ops/packed_tiles.h"
#include "ops/weight_format.h"
#include "ops/weight_pack_internal.h"

namespace qvl::kernels {
namespace {

// Q8 and Q4 stream up to 8 rows: Q4 tiles first widen the panels, and a Q8 tile waits
// on memory for weights the stream prefetches while it multiplies (an 8-row decode step
// 1.3x faster streamed on Zen 5).
constexpr int kQuantStreamRows = 8;
// Q4 weights, half the bytes, are streamed twice for 9-16 rows rather than widened for
// tiles (a 16-row decode step 1.2x faster on Zen 5; equal at 32 rows, and for Q8).
constexpr int kQ4StreamPasses = 2;
// Up to this many rows a panel group's weights serve few row tiles, and the first tile,
// which reads them from memory, prefetches ahead as the stream does (9-32 rows 1.05x on
// Zen 5; at 512 rows it slowed the tiles).
constexpr int kPrefetchTileRows = 32;
// A quantized tile holds float and int32 accumulators: 2 x 4 x 3 of the 32 registers.
constexpr int kQuantRows = 4, kQuantPanels = 3;
// A W8A8 tile holds int32 sums only.
constexpr int kW8A8Rows = 6, kW8A8Panels = 4;

// ---- Q8 / Q4 ----------------------------------------------------------------------------

// Q4 nibbles -> the 16 bytes of `table` with one in-lane lookup: the unsigned codes
// (level + 128) of the Q8 layout, or a Products policy's weight operand.
struct Q4Decoder {
  explicit Q4Decoder(const void* codes)
      : table(_mm512_broadcast_i32x4(_mm_loadu_si128(static_cast<const __m128i*>(codes)))) {}
  __m512i table;
  __m512i nibble = _mm512_set1_epi8(0x0f);
  __m512i Low(__m512i packed) const {
    return _mm512_shuffle_epi8(table, _mm512_and_si512(packed, nibble));
  }
  __m512i High(__m512i packed) const {
    return _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(packed, 4), nibble));
  }
};

// One block's epilogue for one output vector: acc = fma(float(isum) * 2^e, sw, acc). The
// scaling runs on vscalefps, beside the dot-product / fma pipes.
inline __m512 AddBlock(__m512 acc, __m512i isum, __m512 sw, float e) {
  return _mm512_fmadd_ps(_mm512_scalef_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(e)), sw, acc);
}

inline __m512 LoadScales(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(p)));
}

// Q8-layout panels (w0 + p * panel_stride), rows i0 .. i0 + MR - 1.
template <typename Products, int MR, int NP, bool kPrefetch = false>
void QuantTile(const QuantizedRows& x, int64_t i0, const uint8_t* w0, int64_t panel_stride,
               const PanelRange& r, int64_t p0) {
  const int64_t blocks = x.kp / kQuantBlock;
  const int8_t* xc = x.codes + i0 * x.kp;
  const float* xe = x.exps + i0 * blocks;
  const int32_t* xr = x.corr + i0 * blocks;
  __m512 acc[MR][NP];
  for (int i = 0; i < MR; ++i)
    for (int p = 0; p < NP; ++p) acc[i][p] = _mm512_setzero_ps();
  for (int64_t g = 0; g < blocks / 2; ++g) {
    const uint8_t* group = w0 + g * pack::kQ8GroupBytes;
#pragma GCC unroll 2
    for (int blk = 0; blk < 2; ++blk) {
      const int64_t b = 2 * g + blk;
      __m512i isum[MR][NP];
      for (int i = 0; i < MR; ++i) {
        const __m512i c = Products::Start(xr[i * blocks + b]);
        for (int p = 0; p < NP; ++p) isum[i][p] = c;
      }
#pragma GCC unroll 8
      for (int kg = 0; kg < 8; ++kg) {
        __m512i wv[NP];
        for (int p = 0; p < NP; ++p) {
          const uint8_t* line = group + p * panel_stride + blk * 512 + kg * 64;
          // One line ahead per vector, and the group's scale line with its last vector.
          if constexpr (kPrefetch) PrefetchLines(line, kg == 7 && blk == 1 ? 128 : 64);
          wv[p] = Products::Weights(_mm512_load_si512(line));
        }
        for (int i = 0; i < MR; ++i) {
          const __m512i xb = _mm512_set1_epi32(Load32(xc + i * x.kp + b * kQuantBlock + kg * 4));
          for (int p = 0; p < NP; ++p) Products::Dot(isum[i][p], wv[p], xb);
        }
      }
      for (int p = 0; p < NP; ++p) {
        const __m512 sw = LoadScales(group + p * panel_stride + pack::kQ8ScaleOffset + blk * 32);
        for (int i = 0; i < MR; ++i)
          acc[i][p] = AddBlock(acc[i][p], isum[i][p], sw, xe[i * blocks + b]);
      }
    }
  }
  StoreTile<MR, NP>(acc, r, i0, p0, x.row_scales + i0);
}

// Rows 0 .. MR - 1 of x against every panel of r, one panel at a time. Two int32 sums per
// row and block halve the dependency chains.
template <typename Products, int MR, bool kQ4>
void QuantStream(const QuantizedRows& x, const PanelRange& r) {
  constexpr int64_t kGroupBytes = kQ4 ? pack::kQ4GroupBytes : pack::kQ8GroupBytes;
  constexpr int64_t kScaleOffset = kQ4 ? pack::kQ4ScaleOffset : pack::kQ8ScaleOffset;
  constexpr int64_t kBlockBytes = kQ4 ? 256 : 512;
  const int64_t blocks = x.kp / kQuantBlock;
  const Q4Decoder q4(Products::kQ4Table);
  for (int64_t p = 0; p < r.panels; ++p) {
    const uint8_t* w = r.w + p * r.panel_bytes;
    __m512 acc[MR][1];
    for (int i = 0; i < MR; ++i) acc[i][0] = _mm512_setzero_ps();
    for (int64_t g = 0; g < blocks / 2; ++g) {
      const uint8_t* group = w + g * kGroupBytes;
#pragma GCC unroll 2
      for (int blk = 0; blk < 2; ++blk) {
        const int64_t b = 2 * g + blk;
        // The block's share of the group's lines: prefetches spread evenly through the
        // loop keep the stream going where one burst per group stalls it.
        PrefetchLines(group + blk * kBlockBytes,
                      blk == 0 ? kBlockBytes : kGroupBytes - kBlockBytes);
        __m512i s0[MR], s1[MR];
        for (int i = 0; i < MR; ++i) {
          s0[i] = Products::Start(x.corr[i * blocks + b]);
          s1[i] = _mm512_setzero_si512();
        }
        const int8_t* xb = x.codes + b * kQuantBlock;
        const uint8_t* codes = group + blk * kBlockBytes;
        if constexpr (kQ4) {
          // Vector j holds k groups j (low nibbles) and j + 4 (high nibbles).
#pragma GCC unroll 4
          for (int j = 0; j < 4; ++j) {
            const __m512i packed = _mm512_load_si512(codes + j * 64);
            const __m512i lo = q4.Low(packed), hi = q4.High(packed);
            for (int i = 0; i < MR; ++i) {
              const int8_t* xi = xb + i * x.kp;
              Products::Dot(s0[i], lo, _mm512_set1_epi32(Load32(xi + j * 4)));
              Products::Dot(s1[i], hi, _mm512_set1_epi32(Load32(xi + j * 4 + 16)));
            }
          }
        } else {
#pragma GCC unroll 4
          for (int kg = 0; kg < 8; kg += 2) {
            const __m512i w0 = Products::Weights(_mm512_load_si512(codes + kg * 64));
            const __m512i w1 = Products::Weights(_mm512_load_si512(codes + kg * 64 + 64));
            for (int i = 0; i < MR; ++i) {
              const int8_t* xi = xb + i * x.kp;
              Products::Dot(s0[i], w0, _mm512_set1_epi32(Load32(xi + kg * 4)));
              Products::Dot(s1[i], w1, _mm512_set1_epi32(Load32(xi + kg * 4 + 4)));
            }
          }
        }
        const __m512 sw = LoadScales(group + kScaleOffset + blk * 32);
        for (int i = 0; i < MR; ++i) {
          acc[i][0] =
              AddBlock(acc[i][0], _mm512_add_epi32(s0[i], s1[i]), sw, x.exps[i * blocks + b]);
        }
      }
    }
    StoreTile<MR, 1>(acc, r, 0, p, x.row_scales);
  }
}

// Rewrites one Q4 panel in the Q8 layout (codes = level + 128, scales copied), so tiles of
// many rows run the Q8 inner loop on it; the integer sums, hence the results, are equal.
void WidenQ4Panel(const uint8_t* src, int64_t kp, uint8_t* dst) {
  const Q4Decoder q4(kQ4Codes);
  for (int64_t g = 0; g < kp / 64; ++g) {
    const uint8_t* s = src + g * pack::kQ4GroupBytes;
    uint8_t* d = dst + g * pack::kQ8GroupBytes;
    for (int blk = 0; blk < 2; ++blk) {
      for (int j = 0; j < 4; ++j) {
        const __m512i packed = _mm512_load_si512(s + blk * 256 + j * 64);
        _mm512_store_si512(d + blk * 512 + j * 64, q4.Low(packed));
        _mm512_store_si512(d + blk * 512 + (j + 4) * 64, q4.High(packed));
      }
    }
    _mm512_store_si512(d + pack::kQ8ScaleOffset, _mm512_load_si512(s + pack::kQ4ScaleOffset));
  }
}

// ---- W8A8 -------------------------------------------------------------------------------

// Stores y = fma(float(isum), step * sw, bias) for row i of panel p (plus y when
// accumulating). Takes one vector, not the tile: a tile passed by reference would live on
// the stack through the whole K loop.
__attribute__((always_inline)) inline void StoreW8A8(__m512i isum, const RowCodes& x, int64_t i,
                                                     const PanelRange& r, int64_t p) {
  const uint8_t* w = r.w + p * r.panel_bytes;
  const __m512 sw = _mm512_load_ps(reinterpret_cast<const float*>(w + r.kp * kLanes));
  const int64_t col = p * kLanes;
  const __mmask16 mask = ColumnMask(r.n - col);
  const __m512 b = r.bias ? _mm512_maskz_loadu_ps(mask, r.bias + col) : _mm512_setzero_ps();
  const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(x.steps[i]), sw);
  __m512 y = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), scale, b);
  float* dst = r.y + i * r.ldy + col;
  if (r.accumulate) y = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, dst), y);
  _mm512_mask_storeu_ps(dst, mask, y);
}

template <typename Products, int MR, int NP>
void W8A8Tile(const RowCodes& x, int64_t i0, const PanelRange& r, int64_t p0) {
  const int8_t* xc = x.codes + i0 * x.kp;
  const uint8_t* w = r.w + p0 * r.panel_bytes;
  const int64_t stride = r.panel_bytes;
  __m512i isum[NP][MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    const __m512i c = Products::Start(x.corr[i0 + i]);
#pragma GCC unroll 8
    for (int p = 0; p < NP; ++p) isum[p][i] = c;
  }
  for (int64_t t = 0; t < r.kp / 4; ++t) {
    __m512i wv[NP];
#pragma GCC unroll 8
    for (int p = 0; p < NP; ++p)
      wv[p] = Products::Weights(_mm512_load_si512(w + p * stride + t * 64));
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m512i xb = _mm512_set1_epi32(Load32(xc + i * x.kp + 4 * t));
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p) Products::Dot(isum[p][i], wv[p], xb);
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p) {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) StoreW8A8(isum[p][i], x, i0 + i, r, p0 + p);
  }
}

// Rows 0 .. MR - 1 of x against every panel of r, one panel at a time; two sums per row
// halve the dependency chains.
template <typename Products, int MR>
void W8A8Stream(const RowCodes& x, const PanelRange& r) {
  for (int64_t p = 0; p < r.panels; ++p) {
    const uint8_t* w = r.w + p * r.panel_bytes;
    __m512i s0[MR], s1[MR];
    for (int i = 0; i < MR; ++i) {
      s0[i] = Products::Start(x.corr[i]);
      s1[i] = _mm512_setzero_si512();
    }
#pragma GCC unroll 2
    for (int64_t t = 0; t < r.kp / 4; t += 2) {
      PrefetchLines(w + t * 64, 128);
      const __m512i w0 = Products::Weights(_mm512_load_si512(w + t * 64));
      const __m512i w1 = Products::Weights(_mm512_load_si512(w + t * 64 + 64));
      for (int i = 0; i < MR; ++i) {
        const int8_t* xi = x.codes + i * x.kp + 4 * t;
        Products::Dot(s0[i], w0, _mm512_set1_epi32(Load32(xi)));
        Products::Dot(s1[i], w1, _mm512_set1_epi32(Load32(xi + 4)));
      }
    }
    for (int i = 0; i < MR; ++i) StoreW8A8(_mm512_add_epi32(s0[i], s1[i]), x, i, r, p);
  }
}

template <typename Products>
void PackedW8A8(const RowCodes& x, int64_t m, const PanelRange& r) {
  if (m <= kStreamRows) {
    WithRows<kStreamRows>(m, [&]<int R>() { W8A8Stream<Products, R>(x, r); });
    return;
  }
  ForTiles<kW8A8Rows, kW8A8Panels>(m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) {
    W8A8Tile<Products, R, P>(x, i, r, p);
  });
}

// ---- drivers ----------------------------------------------------------------------------

// The m rows of x streamed through r's panels, kQuantStreamRows rows per pass.
template <typename Products, bool kQ4>
void QuantStreamPasses(const QuantizedRows& x, int64_t m, const PanelRange& r) {
  for (int64_t i0 = 0; i0 < m; i0 += kQuantStreamRows) {
    PanelRange rows = r;
    rows.y += i0 * r.ldy;
    WithRows<kQuantStreamRows>(std::min<int64_t>(kQuantStreamRows, m - i0),
                               [&]<int R>() { QuantStream<Products, R, kQ4>(x.Offset(i0), rows); });
  }
}

template <typename Products>
void PackedQ8(const QuantizedRows& x, int64_t m, const PanelRange& r) {
  if (m <= kQuantStreamRows) {
    QuantStreamPasses<Products, false>(x, m, r);
    return;
  }
  ForTiles<kQuantRows, kQuantPanels>(m, r.panels, [&]<int R, int P>(int64_t i, int64_t p) {
    if (i == 0 && m <= kPrefetchTileRows) {
      QuantTile<Products, R, P, true>(x, i, r.w + p * r.panel_bytes, r.panel_bytes, r, p);
    } else {
      QuantTile<Products, R, P>(x, i, r.w + p * r.panel_bytes, r.panel_bytes, r, p);
    }
  });
}

template <typename Products>
void PackedQ4(const QuantizedRows& x, int64_t m, const PanelRange& r) {
  if (m <= kQ4StreamPasses * kQuantStreamRows) {
    QuantStreamPasses<Products, true>(x, m, r);
    return;
  }
  // Widen kQuantPanels panels at a time into a per-thread buffer, then run Q8 tiles.
  const int64_t q8_panel_bytes = x.kp / 64 * pack::kQ8GroupBytes;
  thread_local std::vector<uint8_t> buffer;
  const size_t need = static_cast<size_t>(kQuantPanels * q8_panel_bytes + 64);
  if (buffer.size() < need) buffer.resize(need);
  uint8_t* wide = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(buffer.data()) + 63) &
                                             ~uintptr_t{63});
  for (int64_t p0 = 0; p0 < r.panels; p0 += kQuantPanels) {
    const int64_t np = std::min<int64_t>(kQuantPanels, r.panels - p0);
    for (int64_t p = 0; p < np; ++p) {
      WidenQ4Panel(r.w + (p0 + p) * r.panel_bytes, x.kp, wide + p * q8_panel_bytes);
    }
    ForTiles<kQuantRows, kQuantPanels>(m, np, [&]<int R, int P>(int64_t i, int64_t p) {
      QuantTile<Products, R, P>(x, i, wide + p * q8_panel_bytes, q8_panel_bytes, r, p0 + p);
    });
  }
}

}  // namespace
}  // namespace qvl::kernels
