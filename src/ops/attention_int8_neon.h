// The q.k and p.v products of the NEON int8 attention, written once over a Products
// policy: ARMv8.0's smull + sadalp (attention_int8_neon.cc) or ARMv8.2's sdot
// (attention_int8_neon_dotprod.cc). Both are signed x signed, so the unsigned operand (query
// codes value + 128, probabilities 0 .. 255) is flipped to signed (XOR 0x80: minus 128)
// and 128 times the other operand's sums is added back, which keeps every sum the scalar
// twin's exact integer.
//
// Both products are the same shape: out[r][4n + x] = sum over quads of the 4 bytes of
// a[r] at 4 quad times the 4 bytes of b at quad * bstride + 16 n + 4 x. For q.k, a quad
// is 4 dims and x a key of the group (Int8GroupLayout::Key); for p.v a quad is 4 keys
// and x a dim (Int8GroupLayout::Value). In an anonymous namespace (included by files
// built with different flags).
#pragma once

#include <arm_neon.h>

#include <algorithm>
#include <cstdint>

#include "ops/attention_int8_kernels.h"
#include "ops/attention_tiles.h"

namespace qvl::kernels {
namespace {
namespace neon_int8 {

// Products policy P:
//   P::kRows: rows per tile.
//   P::Tile<MR>(a, lda, b, bstride, quads, out): out[r][n] = the 4 sums of 16 n .. 16 n + 15
//     (quads a multiple of 4).
//   P::Sums(b, bstride, quads, sum): sum[n] lane x = the sum of b's bytes 16 n + 4 x + t
//     over all quads and t < 4.

// Rows of unsigned bytes (cols a multiple of 16) minus 128, as signed bytes.
inline void Flip(const uint8_t* src, int64_t lds, int rows, int cols, int8_t* dst, int64_t ldd) {
  const uint8x16_t bias = vdupq_n_u8(0x80);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; c += 16) {
      vst1q_s8(dst + r * ldd + c, vreinterpretq_s8_u8(veorq_u8(vld1q_u8(src + r * lds + c), bias)));
    }
  }
}

// 128 times the sums of b (P::Sums) into dst[0 .. 15].
template <class P>
void OffsetSums(const int8_t* b, int64_t bstride, int quads, int32_t* dst) {
  int32x4_t sum[4];
  P::Sums(b, bstride, quads, sum);
  QVL_UNROLL_TILE
  for (int n = 0; n < 4; ++n) vst1q_s32(dst + 4 * n, vshlq_n_s32(sum[n], 7));
}

// Calls tile.template operator()<MR>(r) for row tiles of at most kRows rows.
template <int kRows, typename Tile>
void ForRowTiles(int rows, const Tile& tile) {
  int r = 0;
  for (; r + kRows <= rows; r += kRows) tile.template operator()<kRows>(r);
  if (r < rows) {
    WithCount<kRows - 1>(rows - r, [&]<int MR>() { tile.template operator()<MR>(r); });
  }
}

template <class P>
void QkI8(const uint8_t* q, int64_t ldq, int rows, const int8_t* k, const int32_t* k_corr,
          int n_groups, int dp, int32_t* s, int64_t lds) {
  const int64_t gb = Int8GroupLayout::GroupBytes(dp);
  // corr + 128 sum(k): the flipped query codes' share.
  alignas(16) int32_t corr[kKeyBlock];
  for (int g = 0; g < n_groups; ++g) {
    OffsetSums<P>(k + g * gb, 4 * kKeyGroup, dp / 4, corr + g * kKeyGroup);
    for (int c = g * kKeyGroup; c < (g + 1) * kKeyGroup; c += 4) {
      vst1q_s32(corr + c, vaddq_s32(vld1q_s32(corr + c), vld1q_s32(k_corr + c)));
    }
  }
  alignas(16) int8_t qs[kInt8MaxRows * kMaxDp];
  for (int r0 = 0; r0 < rows; r0 += kInt8MaxRows) {
    const int n = std::min(kInt8MaxRows, rows - r0);
    Flip(q + r0 * ldq, ldq, n, dp, qs, dp);
    for (int g = 0; g < n_groups; ++g) {
      ForRowTiles<P::kRows>(n, [&]<int MR>(int r) {
        int32x4_t acc[MR][4];
        P::template Tile<MR>(qs + r * dp, dp, k + g * gb, 4 * kKeyGroup, dp / 4, acc);
        QVL_UNROLL_TILE
        for (int i = 0; i < MR; ++i) {
          int32_t* out = s + (r0 + r + i) * lds + g * kKeyGroup;
          QVL_UNROLL_TILE
          for (int c = 0; c < 4; ++c) {
            vst1q_s32(out + 4 * c, vaddq_s32(acc[i][c], vld1q_s32(corr + g * kKeyGroup + 4 * c)));
          }
        }
      });
    }
  }
}

template <class P>
void PvI8(const uint8_t* p, int64_t ldp, int rows, const int8_t* v, int n_groups, int dp,
          const float* alpha, const float* p_scale, float* o, int64_t ldo) {
  const int quads = n_groups * kKeyGroup / 4;
  // 128 sum(v) per dim over the step's keys: the flipped probabilities' share.
  alignas(16) int32_t corr[kMaxDp];
  for (int c0 = 0; c0 < dp; c0 += 16) OffsetSums<P>(v + c0 * 4, 4 * int64_t{dp}, quads, corr + c0);
  alignas(16) int8_t ps[kInt8MaxRows * kKeyBlock];
  for (int r0 = 0; r0 < rows; r0 += kInt8MaxRows) {
    const int n = std::min(kInt8MaxRows, rows - r0);
    Flip(p + r0 * ldp, ldp, n, n_groups * kKeyGroup, ps, kKeyBlock);
    for (int c0 = 0; c0 < dp; c0 += 16) {
      ForRowTiles<P::kRows>(n, [&]<int MR>(int r) {
        int32x4_t acc[MR][4];
        P::template Tile<MR>(ps + r * kKeyBlock, kKeyBlock, v + c0 * 4, 4 * int64_t{dp}, quads,
                             acc);
        QVL_UNROLL_TILE
        for (int i = 0; i < MR; ++i) {
          const int row = r0 + r + i;
          const float32x4_t a = vdupq_n_f32(alpha[row]), scale = vdupq_n_f32(p_scale[row]);
          float* out = o + row * ldo + c0;
          QVL_UNROLL_TILE
          for (int c = 0; c < 4; ++c) {
            const int32x4_t sum = vaddq_s32(acc[i][c], vld1q_s32(corr + c0 + 4 * c));
            vst1q_f32(out + 4 * c,
                      vfmaq_f32(vmulq_f32(vld1q_f32(out + 4 * c), a), vcvtq_f32_s32(sum), scale));
          }
        }
      });
    }
  }
}

}  // namespace neon_int8
}  // namespace
}  // namespace qvl::kernels
