// AVX512-BF16 flash-attention kernels for bf16 keys and values: vdpbf16ps multiplies a
// broadcast pair of bf16 (two dims of a query, or a probability pair of two keys) with
// 16 packed pairs of the other operand and accumulates into 16 f32 lanes. The packed
// group layouts (KvGroupLayout) are exactly that operand shape, so the cache is read
// with plain loads. The f32 kernels are the AVX-512 tier's.
#include <immintrin.h>

#include "ops/attention_dequant_avx512.h"
#include "ops/attention_kernels.h"
#include "ops/attention_softmax_avx512.h"
#include "ops/attention_tiles.h"
#include "ops/simd_avx512.h"

namespace qvl::kernels {
namespace {

using avx512::FirstLanes;

inline __m512bh BroadcastPair(const uint16_t* p) { return (__m512bh)avx512::Broadcast4Bytes(p); }

template <int MR, int NG>
void QkTile(const uint16_t* q, int64_t ldq, const uint16_t* const* kg, int d, float* s,
            int64_t lds) {
  __m512 acc[MR][NG];
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    QVL_UNROLL_TILE
    for (int g = 0; g < NG; ++g) acc[r][g] = _mm512_setzero_ps();
  }
  for (int i = 0; i < d; i += 2) {
    __m512bh kv[NG];
    QVL_UNROLL_TILE
    for (int g = 0; g < NG; ++g) kv[g] = (__m512bh)_mm512_loadu_si512(kg[g] + i * kKeyGroup);
    QVL_UNROLL_TILE
    for (int r = 0; r < MR; ++r) {
      const __m512bh qv = BroadcastPair(q + r * ldq + i);
      QVL_UNROLL_TILE
      for (int g = 0; g < NG; ++g) acc[r][g] = _mm512_dpbf16_ps(acc[r][g], qv, kv[g]);
    }
  }
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    QVL_UNROLL_TILE
    for (int g = 0; g < NG; ++g) _mm512_storeu_ps(s + r * lds + g * kKeyGroup, acc[r][g]);
  }
}

void QkBf16(const uint16_t* q, int64_t ldq, int rows, const uint16_t* const* kg, int n_groups,
            int d, float* s, int64_t lds) {
  ForQkTiles<4>(rows, n_groups, [&]<int MR, int NG>(int r) {
    QkTile<MR, NG>(q + r * ldq, ldq, kg, d, s + r * lds, lds);
  });
}

// A single loop over the 8 key pairs of a group, the groups unrolled inside it: GCC
// keeps the accumulators in registers only when no loop nests around their updates.
template <int MR, int NC, int NG>
void PvTile(const uint16_t* p, int64_t ldp, const uint16_t* const* vg, int d, int c0,
            const float* alpha, float* o, int64_t ldo) {
  __m512 acc[MR][NC];
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    QVL_UNROLL_TILE
    for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  // Only the last column vector can be partial; full ones take plain loads.
  const __mmask16 last = FirstLanes(d - c0 - 16 * (NC - 1));
  for (int j = 0; j < kKeyGroup; j += 2) {
    QVL_UNROLL_TILE
    for (int g = 0; g < NG; ++g) {
      const uint16_t* vpair = vg[g] + (j / 2) * (2 * d) + 2 * c0;
      __m512bh v[NC];
      QVL_UNROLL_TILE
      for (int c = 0; c + 1 < NC; ++c) v[c] = (__m512bh)_mm512_loadu_si512(vpair + 32 * c);
      v[NC - 1] = (__m512bh)_mm512_maskz_loadu_epi32(last, vpair + 32 * (NC - 1));
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) {
        const __m512bh pv = BroadcastPair(p + r * ldp + g * kKeyGroup + j);
        QVL_UNROLL_TILE
        for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], pv, v[c]);
      }
    }
  }
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    const __m512 a = _mm512_set1_ps(alpha[r]);
    float* orow = o + r * ldo + c0;
    QVL_UNROLL_TILE
    for (int c = 0; c < NC; ++c) {
      const __mmask16 k = c + 1 < NC ? __mmask16(0xffff) : last;
      const __m512 old = _mm512_maskz_loadu_ps(k, orow + 16 * c);
      _mm512_mask_storeu_ps(orow + 16 * c, k, _mm512_fmadd_ps(old, a, acc[r][c]));
    }
  }
}

void PvBf16(const uint16_t* p, int64_t ldp, int rows, const uint16_t* const* vg, int n_groups,
            int d, const float* alpha, float* o, int64_t ldo) {
  ForPvTiles<4, 16>(rows, n_groups, d, [&]<int MR, int NC, int NG>(int r, int c0) {
    PvTile<MR, NC, NG>(p + r * ldp, ldp, vg, d, c0, alpha + r, o + r * ldo, ldo);
  });
}

// vcvtneps2bf16 rounds to nearest even like F32ToBf16 (it flushes denormals, which only
// probabilities below 1e-38 are).
struct RoundByInstruction {
  __m256i operator()(__m512 v) const { return (__m256i)_mm512_cvtneps_pbh(v); }
};

void SoftmaxBf16(const float* s, int64_t lds, int rows, int cols, const int* valid,
                 float scale_log2, float* m, float* l, float* alpha, uint16_t* p, int64_t ldp) {
  SoftmaxBlock(s, lds, rows, cols, valid, scale_log2, m, l, alpha, p, ldp, RoundByInstruction());
}

void DequantKvI8(const int8_t* codes, const float* scales, int d, bool values, uint16_t* out) {
  DequantKvI8Avx512(codes, scales, d, values, out, RoundByInstruction());
}

}  // namespace

AttentionKernels Avx512Bf16AttentionKernels() {
  AttentionKernels k = Avx512AttentionKernels();
  k.dequant_kv_i8 = DequantKvI8;
  k.qk_bf16 = QkBf16;
  k.softmax_bf16 = SoftmaxBf16;
  k.pv_bf16 = PvBf16;
  return k;
}

}  // namespace qvl::kernels
