// AVX-512 flash-attention block kernels. Register tiles of up to 4 query rows times
// 4 key groups (qk) or 4 rows times 64 output dimensions (pv), one FMA per broadcast
// operand. bf16 keys/values are widened to f32 in registers (two FMAs per pair); the
// AVX512-BF16 tier replaces those two kernels with vdpbf16ps ones.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ops/attention_dequant_avx512.h"
#include "ops/attention_kernels.h"
#include "ops/attention_softmax_avx512.h"
#include "ops/attention_tiles.h"
#include "ops/simd_avx512.h"

namespace qvl::kernels {
namespace {

using avx512::FirstLanes;

inline float Bf16Scalar(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

using avx512::EvenHalves;
using avx512::OddHalves;

template <int MR, int NG, typename T>
void QkTile(const T* q, int64_t ldq, const T* const* kg, int d, float* s, int64_t lds) {
  __m512 acc[MR][NG];
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    QVL_UNROLL_TILE
    for (int g = 0; g < NG; ++g) acc[r][g] = _mm512_setzero_ps();
  }
  if constexpr (sizeof(T) == 4) {
    for (int i = 0; i < d; ++i) {
      __m512 kv[NG];
      QVL_UNROLL_TILE
      for (int g = 0; g < NG; ++g) kv[g] = _mm512_loadu_ps(kg[g] + i * kKeyGroup);
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) {
        const __m512 qv = _mm512_set1_ps(q[r * ldq + i]);
        QVL_UNROLL_TILE
        for (int g = 0; g < NG; ++g) acc[r][g] = _mm512_fmadd_ps(qv, kv[g], acc[r][g]);
      }
    }
  } else {
    for (int i = 0; i < d; i += 2) {
      __m512 even[NG], odd[NG];
      QVL_UNROLL_TILE
      for (int g = 0; g < NG; ++g) {
        const __m512i x = _mm512_loadu_si512(kg[g] + i * kKeyGroup);
        even[g] = EvenHalves(x);
        odd[g] = OddHalves(x);
      }
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) {
        const __m512 q0 = _mm512_set1_ps(Bf16Scalar(q[r * ldq + i]));
        const __m512 q1 = _mm512_set1_ps(Bf16Scalar(q[r * ldq + i + 1]));
        QVL_UNROLL_TILE
        for (int g = 0; g < NG; ++g) {
          acc[r][g] = _mm512_fmadd_ps(q0, even[g], acc[r][g]);
          acc[r][g] = _mm512_fmadd_ps(q1, odd[g], acc[r][g]);
        }
      }
    }
  }
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    QVL_UNROLL_TILE
    for (int g = 0; g < NG; ++g) _mm512_storeu_ps(s + r * lds + g * kKeyGroup, acc[r][g]);
  }
}

template <typename T>
void Qk(const T* q, int64_t ldq, int rows, const T* const* kg, int n_groups, int d, float* s,
        int64_t lds) {
  ForQkTiles<4>(rows, n_groups, [&]<int MR, int NG>(int r) {
    QkTile<MR, NG>(q + r * ldq, ldq, kg, d, s + r * lds, lds);
  });
}

void QkF32(const float* q, int64_t ldq, int rows, const float* const* kg, int n_groups, int d,
           float* s, int64_t lds) {
  Qk(q, ldq, rows, kg, n_groups, d, s, lds);
}

void QkBf16(const uint16_t* q, int64_t ldq, int rows, const uint16_t* const* kg, int n_groups,
            int d, float* s, int64_t lds) {
  Qk(q, ldq, rows, kg, n_groups, d, s, lds);
}

struct RoundByIntegerMath {
  __m256i operator()(__m512 v) const { return avx512::RoundToBf16(v); }
};

void SoftmaxF32(const float* s, int64_t lds, int rows, int cols, const int* valid, float scale_log2,
                float* m, float* l, float* alpha, float* p, int64_t ldp) {
  SoftmaxBlock(s, lds, rows, cols, valid, scale_log2, m, l, alpha, p, ldp, RoundByIntegerMath());
}

void SoftmaxBf16(const float* s, int64_t lds, int rows, int cols, const int* valid,
                 float scale_log2, float* m, float* l, float* alpha, uint16_t* p, int64_t ldp) {
  SoftmaxBlock(s, lds, rows, cols, valid, scale_log2, m, l, alpha, p, ldp, RoundByIntegerMath());
}

// o[MR rows][NC*16 dims starting at c0] = o * alpha + p . v over NG key groups. One loop
// over the tokens of a group with the groups unrolled inside: GCC keeps the
// accumulators in registers only when no loop nests around their updates.
template <int MR, int NC, int NG, typename T>
void PvTile(const T* p, int64_t ldp, const T* const* vg, int d, int c0, const float* alpha,
            float* o, int64_t ldo) {
  __m512 acc[MR][NC];
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    QVL_UNROLL_TILE
    for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  __mmask16 mask[NC];
  QVL_UNROLL_TILE
  for (int c = 0; c < NC; ++c) mask[c] = FirstLanes(d - c0 - 16 * c);
  if constexpr (sizeof(T) == 4) {
    for (int j = 0; j < kKeyGroup; ++j) {
      QVL_UNROLL_TILE
      for (int g = 0; g < NG; ++g) {
        const float* vrow = vg[g] + j * d + c0;
        __m512 v[NC];
        QVL_UNROLL_TILE
        for (int c = 0; c < NC; ++c) v[c] = _mm512_maskz_loadu_ps(mask[c], vrow + 16 * c);
        QVL_UNROLL_TILE
        for (int r = 0; r < MR; ++r) {
          const __m512 pv = _mm512_set1_ps(p[r * ldp + g * kKeyGroup + j]);
          QVL_UNROLL_TILE
          for (int c = 0; c < NC; ++c) acc[r][c] = _mm512_fmadd_ps(pv, v[c], acc[r][c]);
        }
      }
    }
  } else {
    for (int j = 0; j < kKeyGroup; j += 2) {
      QVL_UNROLL_TILE
      for (int g = 0; g < NG; ++g) {
        // Dims c0 + 16c .. +16 of tokens j, j+1: 32 interleaved bf16.
        const uint16_t* vpair = vg[g] + (j / 2) * (2 * d) + 2 * c0;
        __m512 even[NC], odd[NC];
        QVL_UNROLL_TILE
        for (int c = 0; c < NC; ++c) {
          const __m512i x = _mm512_maskz_loadu_epi32(mask[c], vpair + 32 * c);
          even[c] = EvenHalves(x);
          odd[c] = OddHalves(x);
        }
        QVL_UNROLL_TILE
        for (int r = 0; r < MR; ++r) {
          const __m512 p0 = _mm512_set1_ps(Bf16Scalar(p[r * ldp + g * kKeyGroup + j]));
          const __m512 p1 = _mm512_set1_ps(Bf16Scalar(p[r * ldp + g * kKeyGroup + j + 1]));
          QVL_UNROLL_TILE
          for (int c = 0; c < NC; ++c) {
            acc[r][c] = _mm512_fmadd_ps(p0, even[c], acc[r][c]);
            acc[r][c] = _mm512_fmadd_ps(p1, odd[c], acc[r][c]);
          }
        }
      }
    }
  }
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    const __m512 a = _mm512_set1_ps(alpha[r]);
    float* orow = o + r * ldo + c0;
    QVL_UNROLL_TILE
    for (int c = 0; c < NC; ++c) {
      const __m512 old = _mm512_maskz_loadu_ps(mask[c], orow + 16 * c);
      _mm512_mask_storeu_ps(orow + 16 * c, mask[c], _mm512_fmadd_ps(old, a, acc[r][c]));
    }
  }
}

template <typename T>
void Pv(const T* p, int64_t ldp, int rows, const T* const* vg, int n_groups, int d,
        const float* alpha, float* o, int64_t ldo) {
  ForPvTiles<4, 16>(rows, n_groups, d, [&]<int MR, int NC, int NG>(int r, int c0) {
    PvTile<MR, NC, NG>(p + r * ldp, ldp, vg, d, c0, alpha + r, o + r * ldo, ldo);
  });
}

void PvF32(const float* p, int64_t ldp, int rows, const float* const* vg, int n_groups, int d,
           const float* alpha, float* o, int64_t ldo) {
  Pv(p, ldp, rows, vg, n_groups, d, alpha, o, ldo);
}

void PvBf16(const uint16_t* p, int64_t ldp, int rows, const uint16_t* const* vg, int n_groups,
            int d, const float* alpha, float* o, int64_t ldo) {
  Pv(p, ldp, rows, vg, n_groups, d, alpha, o, ldo);
}

void DequantKvI8(const int8_t* codes, const float* scales, int d, bool values, uint16_t* out) {
  DequantKvI8Avx512(codes, scales, d, values, out, RoundByIntegerMath());
}

}  // namespace

AttentionKernels Avx512AttentionKernels() {
  return {QkF32, QkBf16, SoftmaxF32, SoftmaxBf16, PvF32, PvBf16, DequantKvI8};
}

}  // namespace qvl::kernels
