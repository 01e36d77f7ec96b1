// AVX2 + FMA flash-attention block kernels (8 f32 lanes, 16 registers): tiles of up to
// 4 query rows times one 16-key group (qk) or 2 rows times 32 output dimensions (pv).
// bf16 keys/values are widened in registers, two FMAs per packed pair.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ops/attention_kernels.h"
#include "ops/attention_tiles.h"
#include "ops/simd_avx2.h"
#include "ops/simd_math.h"

namespace qvl::kernels {
namespace {

using avx2::EvenHalves;
using avx2::FirstLanes;
using avx2::OddHalves;

inline float Bf16Scalar(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// One key group (16 keys = 2 vectors) against MR query rows.
template <int MR, typename T>
void QkTile(const T* q, int64_t ldq, const T* kg, int d, float* s, int64_t lds) {
  __m256 acc[MR][2];
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  if constexpr (sizeof(T) == 4) {
    for (int i = 0; i < d; ++i) {
      const __m256 k0 = _mm256_loadu_ps(kg + i * kKeyGroup);
      const __m256 k1 = _mm256_loadu_ps(kg + i * kKeyGroup + 8);
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) {
        const __m256 qv = _mm256_set1_ps(q[r * ldq + i]);
        acc[r][0] = _mm256_fmadd_ps(qv, k0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(qv, k1, acc[r][1]);
      }
    }
  } else {
    for (int i = 0; i < d; i += 2) {
      const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kg + i * kKeyGroup));
      const __m256i x1 =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kg + i * kKeyGroup + 16));
      const __m256 e0 = EvenHalves(x0), o0 = OddHalves(x0);
      const __m256 e1 = EvenHalves(x1), o1 = OddHalves(x1);
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) {
        const __m256 q0 = _mm256_set1_ps(Bf16Scalar(q[r * ldq + i]));
        const __m256 q1 = _mm256_set1_ps(Bf16Scalar(q[r * ldq + i + 1]));
        acc[r][0] = _mm256_fmadd_ps(q1, o0, _mm256_fmadd_ps(q0, e0, acc[r][0]));
        acc[r][1] = _mm256_fmadd_ps(q1, o1, _mm256_fmadd_ps(q0, e1, acc[r][1]));
      }
    }
  }
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    _mm256_storeu_ps(s + r * lds, acc[r][0]);
    _mm256_storeu_ps(s + r * lds + 8, acc[r][1]);
  }
}

template <typename T>
void Qk(const T* q, int64_t ldq, int rows, const T* const* kg, int n_groups, int d, float* s,
        int64_t lds) {
  for (int g = 0; g < n_groups; ++g) {
    float* sg = s + g * kKeyGroup;
    int r = 0;
    for (; r + 4 <= rows; r += 4) QkTile<4>(q + r * ldq, ldq, kg[g], d, sg + r * lds, lds);
    for (; r < rows; ++r) QkTile<1>(q + r * ldq, ldq, kg[g], d, sg + r * lds, lds);
  }
}

void QkF32(const float* q, int64_t ldq, int rows, const float* const* kg, int n_groups, int d,
           float* s, int64_t lds) {
  Qk(q, ldq, rows, kg, n_groups, d, s, lds);
}

void QkBf16(const uint16_t* q, int64_t ldq, int rows, const uint16_t* const* kg, int n_groups,
            int d, float* s, int64_t lds) {
  Qk(q, ldq, rows, kg, n_groups, d, s, lds);
}

inline float HorizontalMax(__m256 v) {
  __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_max_ps(x, _mm_movehl_ps(x, x));
  x = _mm_max_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

inline float HorizontalSum(__m256 v) {
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

inline uint16_t RoundBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

template <typename T>
void Softmax(const float* s, int64_t lds, int rows, int cols, const int* valid, float scale_log2,
             float* m, float* l, float* alpha, T* p, int64_t ldp) {
  const __m256 scale = _mm256_set1_ps(scale_log2);
  const __m256 neg_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  const int chunks = (cols + 7) / 8;
  alignas(32) float e[8];
  for (int r = 0; r < rows; ++r) {
    const float* sr = s + r * lds;
    T* pr = p + r * ldp;
    const int n = valid[r];
    if (n <= 0) {
      alpha[r] = 1.0f;
      std::memset(pr, 0, sizeof(T) * cols);
      continue;
    }
    __m256 mx = neg_inf;
    for (int c = 0; c < chunks; ++c) {
      const __m256 k = _mm256_castsi256_ps(FirstLanes(n - 8 * c));
      mx = _mm256_max_ps(mx, _mm256_blendv_ps(neg_inf, _mm256_loadu_ps(sr + 8 * c), k));
    }
    const float m_new = std::max(m[r], HorizontalMax(mx) * scale_log2);
    const __m256 mv = _mm256_set1_ps(m_new);
    __m256 sum = _mm256_setzero_ps();
    for (int c = 0; c < chunks; ++c) {
      const __m256 k = _mm256_castsi256_ps(FirstLanes(n - 8 * c));
      const __m256 x = _mm256_fmsub_ps(_mm256_loadu_ps(sr + 8 * c), scale, mv);
      const __m256 ev = _mm256_and_ps(simd::Exp2NonPositive<Avx2>(x), k);
      sum = _mm256_add_ps(sum, ev);
      const int width = std::min(8, cols - 8 * c);
      if constexpr (sizeof(T) == 4) {
        _mm256_maskstore_ps(pr + 8 * c, FirstLanes(width), ev);
      } else {
        _mm256_store_ps(e, ev);
        for (int i = 0; i < width; ++i) pr[8 * c + i] = RoundBf16(e[i]);
      }
    }
    const float a =
        m[r] == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp2(m[r] - m_new);
    alpha[r] = a;
    for (int i = 0; i < kSumLanes; ++i) l[r * kSumLanes + i] *= a;
    l[r * kSumLanes] += HorizontalSum(sum);
    m[r] = m_new;
  }
}

// o[MR rows][dims c0 .. c0 + 8 NC) = o * alpha + p . v over NG key groups: one loop over
// a group's tokens, the groups unrolled inside, so the accumulators stay in registers.
template <int MR, int NC, int NG, typename T>
void PvTile(const T* p, int64_t ldp, const T* const* vg, int d, int c0, const float* alpha,
            float* o, int64_t ldo) {
  __m256 acc[MR][NC];
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    QVL_UNROLL_TILE
    for (int c = 0; c < NC; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  __m256i mask[NC];
  QVL_UNROLL_TILE
  for (int c = 0; c < NC; ++c) mask[c] = FirstLanes(d - c0 - 8 * c);
  if constexpr (sizeof(T) == 4) {
    for (int j = 0; j < kKeyGroup; ++j) {
      QVL_UNROLL_TILE
      for (int g = 0; g < NG; ++g) {
        const float* vrow = vg[g] + j * d + c0;
        __m256 v[NC];
        QVL_UNROLL_TILE
        for (int c = 0; c < NC; ++c) v[c] = _mm256_maskload_ps(vrow + 8 * c, mask[c]);
        QVL_UNROLL_TILE
        for (int r = 0; r < MR; ++r) {
          const __m256 pv = _mm256_set1_ps(p[r * ldp + g * kKeyGroup + j]);
          QVL_UNROLL_TILE
          for (int c = 0; c < NC; ++c) acc[r][c] = _mm256_fmadd_ps(pv, v[c], acc[r][c]);
        }
      }
    }
  } else {
    for (int j = 0; j < kKeyGroup; j += 2) {
      QVL_UNROLL_TILE
      for (int g = 0; g < NG; ++g) {
        const uint16_t* vpair = vg[g] + (j / 2) * (2 * d) + 2 * c0;
        __m256 even[NC], odd[NC];
        QVL_UNROLL_TILE
        for (int c = 0; c < NC; ++c) {
          const __m256i x =
              _mm256_maskload_epi32(reinterpret_cast<const int*>(vpair + 16 * c), mask[c]);
          even[c] = EvenHalves(x);
          odd[c] = OddHalves(x);
        }
        QVL_UNROLL_TILE
        for (int r = 0; r < MR; ++r) {
          const __m256 p0 = _mm256_set1_ps(Bf16Scalar(p[r * ldp + g * kKeyGroup + j]));
          const __m256 p1 = _mm256_set1_ps(Bf16Scalar(p[r * ldp + g * kKeyGroup + j + 1]));
          QVL_UNROLL_TILE
          for (int c = 0; c < NC; ++c)
            acc[r][c] = _mm256_fmadd_ps(p1, odd[c], _mm256_fmadd_ps(p0, even[c], acc[r][c]));
        }
      }
    }
  }
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    const __m256 a = _mm256_set1_ps(alpha[r]);
    float* orow = o + r * ldo + c0;
    QVL_UNROLL_TILE
    for (int c = 0; c < NC; ++c) {
      const __m256 old = _mm256_maskload_ps(orow + 8 * c, mask[c]);
      _mm256_maskstore_ps(orow + 8 * c, mask[c], _mm256_fmadd_ps(old, a, acc[r][c]));
    }
  }
}

template <typename T>
void Pv(const T* p, int64_t ldp, int rows, const T* const* vg, int n_groups, int d,
        const float* alpha, float* o, int64_t ldo) {
  ForPvTiles<2, 8>(rows, n_groups, d, [&]<int MR, int NC, int NG>(int r, int c0) {
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

// 8 codes times their scales, rounded to bf16 (finite products).
inline void DequantStore(const int8_t* codes, __m256 scale, uint16_t* out) {
  const __m256 x = _mm256_cvtepi32_ps(
      _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes))));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), avx2::RoundToBf16(_mm256_mul_ps(x, scale)));
}

void DequantKvI8(const int8_t* codes, const float* scales, int d, bool values, uint16_t* out) {
  if (values) {
    // A token pair's row: dim i of tokens 2p, 2p + 1 at 2i, 2i + 1; 4 dims per vector,
    // all in one block, so the scales are the pair's two, repeated.
    for (int p = 0; p < kKeyGroup / 2; ++p) {
      for (int i = 0; i < d; i += 4) {
        const float* pair = scales + i / kKvI8Block * kKeyGroup + 2 * p;
        const __m256 scale =
            _mm256_castpd_ps(_mm256_broadcast_sd(reinterpret_cast<const double*>(pair)));
        const int64_t at = int64_t{p} * 2 * d + 2 * i;
        DequantStore(codes + at, scale, out + at);
      }
    }
    return;
  }
  // A dim pair's row: 16 tokens, two dims each, four tokens per vector, each scale twice.
  const __m256i lower = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
  const __m256i upper = _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7);
  for (int b = 0; b < d / kKvI8Block; ++b) {
    const __m256 s0 = _mm256_loadu_ps(scales + b * kKeyGroup);
    const __m256 s1 = _mm256_loadu_ps(scales + b * kKeyGroup + 8);
    const __m256 pattern[4] = {
        _mm256_permutevar8x32_ps(s0, lower), _mm256_permutevar8x32_ps(s0, upper),
        _mm256_permutevar8x32_ps(s1, lower), _mm256_permutevar8x32_ps(s1, upper)};
    for (int r = b * kKvI8Block / 2; r < (b + 1) * kKvI8Block / 2; ++r) {
      const int64_t at = int64_t{r} * 2 * kKeyGroup;
      for (int v = 0; v < 4; ++v) DequantStore(codes + at + 8 * v, pattern[v], out + at + 8 * v);
    }
  }
}

}  // namespace

AttentionKernels Avx2AttentionKernels() {
  return {QkF32, QkBf16, Softmax<float>, Softmax<uint16_t>, PvF32, PvBf16, DequantKvI8};
}

}  // namespace qvl::kernels
