// AVX512-VNNI int8 flash-attention kernels: vpdpbusd multiplies a broadcast group of 4
// unsigned bytes (4 dims of a query's codes, or the probabilities of 4 keys) with 16
// groups of 4 signed bytes of the other operand and accumulates 16 int32 lanes. The
// packed groups (Int8GroupLayout) are exactly that operand, so they are read with plain
// loads. The softmax and the quantizers are attention_int8_avx512.h's. Built with the VNNI
// flags only: kAvx512Vnni and the tiers above it run them.
#include <immintrin.h>

#include "ops/attention_int8_avx512.h"
#include "ops/attention_int8_kernels.h"
#include "ops/attention_tiles.h"
#include "ops/simd_avx512.h"

namespace qvl::kernels {
namespace {

using avx512::DotBytes;

template <int MR, int NG>
void QkTile(const uint8_t* q, int64_t ldq, const int8_t* k, const int32_t* corr, int dp, int32_t* s,
            int64_t lds) {
  const int64_t gb = Int8GroupLayout::GroupBytes(dp);
  __m512i acc[MR][NG];
  QVL_UNROLL_TILE
  for (int g = 0; g < NG; ++g) {
    const __m512i c = _mm512_loadu_si512(corr + g * kKeyGroup);
    QVL_UNROLL_TILE
    for (int r = 0; r < MR; ++r) acc[r][g] = c;
  }
  for (int i = 0; i < dp; i += 4) {
    __m512i kv[NG];
    QVL_UNROLL_TILE
    for (int g = 0; g < NG; ++g) kv[g] = _mm512_loadu_si512(k + g * gb + i * kKeyGroup);
    QVL_UNROLL_TILE
    for (int r = 0; r < MR; ++r) {
      const __m512i qv = avx512::Broadcast4Bytes(q + r * ldq + i);
      QVL_UNROLL_TILE
      for (int g = 0; g < NG; ++g) DotBytes(acc[r][g], qv, kv[g]);
    }
  }
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    QVL_UNROLL_TILE
    for (int g = 0; g < NG; ++g) _mm512_storeu_si512(s + r * lds + g * kKeyGroup, acc[r][g]);
  }
}

void QkI8(const uint8_t* q, int64_t ldq, int rows, const int8_t* k, const int32_t* k_corr,
          int n_groups, int dp, int32_t* s, int64_t lds) {
  ForQkTiles<4>(rows, n_groups, [&]<int MR, int NG>(int r) {
    QkTile<MR, NG>(q + r * ldq, ldq, k, k_corr, dp, s + r * lds, lds);
  });
}

// One loop over the key quads of all groups (contiguous: quad q's values start at byte
// 4 q dp); NC vectors of 16 dims from c0.
template <int MR, int NC, int NG>
void PvTile(const uint8_t* p, int64_t ldp, const int8_t* v, int dp, int c0, const float* alpha,
            const float* p_scale, float* o, int64_t ldo) {
  __m512i acc[MR][NC];
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    QVL_UNROLL_TILE
    for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_setzero_si512();
  }
  for (int quad = 0; quad < NG * kKeyGroup / 4; ++quad) {
    const int8_t* vq = v + (int64_t{quad} * dp + c0) * 4;
    __m512i vv[NC];
    QVL_UNROLL_TILE
    for (int c = 0; c < NC; ++c) vv[c] = _mm512_loadu_si512(vq + 64 * c);
    QVL_UNROLL_TILE
    for (int r = 0; r < MR; ++r) {
      const __m512i pv = avx512::Broadcast4Bytes(p + r * ldp + 4 * quad);
      QVL_UNROLL_TILE
      for (int c = 0; c < NC; ++c) DotBytes(acc[r][c], pv, vv[c]);
    }
  }
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    const __m512 a = _mm512_set1_ps(alpha[r]);
    const __m512 ps = _mm512_set1_ps(p_scale[r]);
    float* orow = o + r * ldo + c0;
    QVL_UNROLL_TILE
    for (int c = 0; c < NC; ++c) {
      const __m512 old = _mm512_mul_ps(_mm512_loadu_ps(orow + 16 * c), a);
      _mm512_storeu_ps(orow + 16 * c, _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[r][c]), ps, old));
    }
  }
}

void PvI8(const uint8_t* p, int64_t ldp, int rows, const int8_t* v, int n_groups, int dp,
          const float* alpha, const float* p_scale, float* o, int64_t ldo) {
  ForPvTiles<4, 16>(rows, n_groups, dp, [&]<int MR, int NC, int NG>(int r, int c0) {
    PvTile<MR, NC, NG>(p + r * ldp, ldp, v, dp, c0, alpha + r, p_scale + r, o + r * ldo, ldo);
  });
}

}  // namespace

Int8AttentionKernels Avx512VnniInt8AttentionKernels() {
  return {QkI8, SoftmaxInChunks<SoftmaxRows>, PvI8, QuantizeRotated, QuantizeValues};
}

}  // namespace qvl::kernels
