// AVX2 int8 flash-attention kernels, for CPUs without VNNI or AVX-512 (the AVX-512 tier
// without VNNI has them at 512 bits, attention_int8_avx512.cc). AVX2 has no
// unsigned-by-signed byte dot product that cannot saturate: vpmaddubsw's pair sums of
// 255 x 127 overflow int16. So both products widen one operand to int16 (vpmovsxbw on the
// packed groups as they lie) and use vpmaddwd, whose pair sums are int32: the integer
// sums are exactly the vpdpbusd tier's, and the tiers differ only in the softmax's float
// parts. The other operand (query codes, probabilities) is widened once per call, so a
// row's four values broadcast straight from memory.
//
// vpmaddwd leaves each output as two int32 halves in adjacent lanes (dims 0-1 and 2-3 of
// a key, tokens 0-1 and 2-3 of a value dim); one vphaddd and a lane permute per 8
// outputs join them at the end of a tile.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "ops/attention_int8_kernels.h"
#include "ops/attention_tiles.h"
#include "ops/simd_avx2.h"
#include "ops/simd_math.h"

namespace qvl::kernels {
namespace {

// Row tiles: 4 rows x 2 accumulators + 2 widened operands + 1 broadcast (6 rows spilled).
constexpr int kTileRows = 4;

inline __m256i Widen16(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

inline __m256i Broadcast4(const int16_t* p) {
  int64_t v;
  std::memcpy(&v, p, 8);
  return _mm256_set1_epi64x(v);
}

// The 8 sums of two vpmaddwd accumulators holding outputs 0-3 and 4-7 as lane pairs.
inline __m256i JoinPairs(__m256i lo, __m256i hi) {
  return _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo, hi), 0xD8);
}

// Scores of MR widened query rows against 8 keys (half h of each of NG groups).
template <int MR, int NG>
void QkTile(const int16_t* q, const int8_t* k, const int32_t* corr, int dp, int32_t* s,
            int64_t lds) {
  const int64_t gb = Int8GroupLayout::GroupBytes(dp);
  for (int g = 0; g < NG; ++g) {
    for (int h = 0; h < 2; ++h) {
      __m256i acc[MR][2];
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
      // Key(j, i): 4 dims per token, 16 tokens per 4 dims; half h is tokens 8h .. 8h + 7.
      const int8_t* kh = k + g * gb + h * 32;
      for (int i = 0; i < dp; i += 4) {
        const __m256i k0 = Widen16(kh + i * kKeyGroup);
        const __m256i k1 = Widen16(kh + i * kKeyGroup + 16);
        QVL_UNROLL_TILE
        for (int r = 0; r < MR; ++r) {
          const __m256i qv = Broadcast4(q + r * dp + i);
          acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(k0, qv));
          acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(k1, qv));
        }
      }
      const int c = g * kKeyGroup + h * 8;
      const __m256i cv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(corr + c));
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(s + r * lds + c),
                            _mm256_add_epi32(JoinPairs(acc[r][0], acc[r][1]), cv));
      }
    }
  }
}

void QkI8(const uint8_t* q, int64_t ldq, int rows, const int8_t* k, const int32_t* k_corr,
          int n_groups, int dp, int32_t* s, int64_t lds) {
  alignas(32) int16_t wide[kInt8MaxRows * kMaxDp];
  for (int r0 = 0; r0 < rows; r0 += kInt8MaxRows) {
    const int n = std::min(kInt8MaxRows, rows - r0);
    avx2::WidenBytes(q + r0 * ldq, ldq, n, dp, wide, dp);
    ForQkTiles<kTileRows>(n, n_groups, [&]<int MR, int NG>(int r) {
      QkTile<MR, NG>(wide + r * dp, k, k_corr, dp, s + (r0 + r) * lds, lds);
    });
  }
}

// The vpdpbusd tier's three passes (the scaled scores, kept in L1 for the third, and their
// block maxima; references and scales of 8 rows at a time; probability codes), 8 lanes
// wide. At most kInt8MaxRows rows.
void SoftmaxRows(const int32_t* s, int64_t lds, int rows, int cols, int valid,
                 const float* row_scale, const float* k_scale, float* m, float* l, float* alpha,
                 float* p_scale, uint8_t* p, int64_t ldp) {
  static_assert(kSumLanes == 16);
  static_assert(kKeyBlock == 64, "a full block's codes are packed 32 at a time");
  const int n = valid < cols ? valid : cols;
  const int chunks = cols / 8;
  if (n <= 0) {
    EmptyBlock(rows, cols, alpha, p_scale, p, ldp);
    return;
  }
  const __m256 neg_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  alignas(32) float mb[kInt8MaxRows] = {};
  alignas(32) float xs[kInt8MaxRows][kKeyBlock];
  for (int r = 0; r < rows; ++r) {
    const __m256 rs = _mm256_set1_ps(row_scale[r]);
    __m256 mx = neg_inf;
    for (int c = 0; c < chunks; ++c) {
      // x = s * (k_scale * row_scale), as the scalar twin rounds it.
      const __m256i sv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + r * lds + 8 * c));
      const __m256 x = _mm256_mul_ps(_mm256_cvtepi32_ps(sv),
                                     _mm256_mul_ps(_mm256_loadu_ps(k_scale + 8 * c), rs));
      _mm256_store_ps(xs[r] + 8 * c, x);
      if (8 * c + 8 <= n) {
        mx = _mm256_max_ps(mx, x);
      } else if (8 * c < n) {
        const __m256 valid_lanes = _mm256_castsi256_ps(avx2::FirstLanes(n - 8 * c));
        mx = _mm256_blendv_ps(mx, _mm256_max_ps(mx, x), valid_lanes);
      }
    }
    mb[r] = avx2::MaxOf(mx);
  }
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 inv255 = _mm256_set1_ps(1.0f / 255.0f);
  for (int r0 = 0; r0 < rows; r0 += 8) {
    const __m256i lanes = avx2::FirstLanes(rows - r0);
    const __m256 mo = _mm256_maskload_ps(m + r0, lanes);
    const __m256 mbv = _mm256_load_ps(mb + r0);
    const __m256 first = _mm256_cmp_ps(mo, neg_inf, _CMP_EQ_OQ);
    const __m256 grew = _mm256_cmp_ps(mo, mbv, _CMP_LT_OQ);
    // |m - mb| is +inf for the first block; alpha and p_scale are set apart for it.
    const __m256 e =
        simd::Exp2NonPositive<Avx2>(_mm256_sub_ps(_mm256_min_ps(mo, mbv), _mm256_max_ps(mo, mbv)));
    const __m256 a = _mm256_blendv_ps(one, e, grew);
    const __m256 ps =
        _mm256_mul_ps(_mm256_blendv_ps(e, one, _mm256_andnot_ps(first, grew)), inv255);
    _mm256_maskstore_ps(alpha + r0, lanes, _mm256_andnot_ps(first, a));
    _mm256_maskstore_ps(p_scale + r0, lanes, _mm256_blendv_ps(ps, inv255, first));
    _mm256_maskstore_ps(m + r0, lanes, _mm256_max_ps(mo, mbv));
  }
  // The packs work within 128-bit lanes: dword c of lane 0 holds chunk c's first four
  // codes, dword c of lane 1 its last four; this puts chunk c's at dwords 2c and 2c + 1.
  const __m256i quad_order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int r = 0; r < rows; ++r) {
    uint8_t* pr = p + r * ldp;
    const __m256 mbv = _mm256_set1_ps(mb[r]);
    __m256i sum = _mm256_setzero_si256();
    __m256i code[kKeyBlock / 8];
    for (int c = 0; c < chunks; ++c) {
      // Padding keys may score above the block maximum: clamp to 0 before the exp2.
      const __m256 y =
          _mm256_min_ps(_mm256_sub_ps(_mm256_load_ps(xs[r] + 8 * c), mbv), _mm256_setzero_ps());
      code[c] = _mm256_and_si256(_mm256_cvtps_epi32(simd::Exp2NonPositiveTimes255<Avx2>(y)),
                                 avx2::FirstLanes(n - 8 * c));
      sum = _mm256_add_epi32(sum, code[c]);
    }
    if (chunks == kKeyBlock / 8) {  // codes are 0 .. 255, so the saturating packs keep them
      for (int half = 0; half < 2; ++half) {
        const __m256i* c4 = code + 4 * half;
        const __m256i bytes = _mm256_packus_epi16(_mm256_packus_epi32(c4[0], c4[1]),
                                                  _mm256_packus_epi32(c4[2], c4[3]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(pr + 32 * half),
                            _mm256_permutevar8x32_epi32(bytes, quad_order));
      }
    } else {
      for (int c = 0; c < chunks; ++c) {
        const __m256i words = _mm256_packus_epi32(code[c], code[c]);
        const __m256i bytes = _mm256_packus_epi16(words, words);
        _mm_storel_epi64(
            reinterpret_cast<__m128i*>(pr + 8 * c),
            _mm_unpacklo_epi32(_mm256_castsi256_si128(bytes), _mm256_extracti128_si256(bytes, 1)));
      }
    }
    const __m256 a = _mm256_set1_ps(alpha[r]);
    float* lr = l + r * kSumLanes;
    _mm256_storeu_ps(lr, _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_set1_ps(p_scale[r]),
                                         _mm256_mul_ps(_mm256_loadu_ps(lr), a)));
    _mm256_storeu_ps(lr + 8, _mm256_mul_ps(_mm256_loadu_ps(lr + 8), a));
  }
}

// MR widened probability rows (kKeyBlock apart) times the values of 8 dims from c0, over
// the key quads of all NG groups (contiguous: quad q's values start at byte 4 q dp).
template <int MR, int NG>
void PvTile(const int16_t* p, const int8_t* v, int dp, int c0, const float* alpha,
            const float* p_scale, float* o, int64_t ldo) {
  __m256i acc[MR][2];
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (int quad = 0; quad < NG * kKeyGroup / 4; ++quad) {
    const int8_t* vq = v + (int64_t{quad} * dp + c0) * 4;
    const __m256i v0 = Widen16(vq), v1 = Widen16(vq + 16);
    QVL_UNROLL_TILE
    for (int r = 0; r < MR; ++r) {
      const __m256i pv = Broadcast4(p + r * kKeyBlock + 4 * quad);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(v0, pv));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(v1, pv));
    }
  }
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    float* orow = o + r * ldo + c0;
    const __m256 old = _mm256_mul_ps(_mm256_loadu_ps(orow), _mm256_set1_ps(alpha[r]));
    _mm256_storeu_ps(orow, _mm256_fmadd_ps(_mm256_cvtepi32_ps(JoinPairs(acc[r][0], acc[r][1])),
                                           _mm256_set1_ps(p_scale[r]), old));
  }
}

void PvI8(const uint8_t* p, int64_t ldp, int rows, const int8_t* v, int n_groups, int dp,
          const float* alpha, const float* p_scale, float* o, int64_t ldo) {
  alignas(32) int16_t wide[kInt8MaxRows * kKeyBlock];
  for (int r0 = 0; r0 < rows; r0 += kInt8MaxRows) {
    const int n = std::min(kInt8MaxRows, rows - r0);
    avx2::WidenBytes(p + r0 * ldp, ldp, n, n_groups * kKeyGroup, wide, kKeyBlock);
    for (int r = 0; r < n; r += kTileRows) {
      WithCount<kTileRows>(std::min(kTileRows, n - r), [&]<int MR>() {
        WithCount<kMaxGroups>(n_groups, [&]<int NG>() {
          for (int c0 = 0; c0 < dp; c0 += 8) {
            PvTile<MR, NG>(wide + r * kKeyBlock, v, dp, c0, alpha + r0 + r, p_scale + r0 + r,
                           o + (r0 + r) * ldo, ldo);
          }
        });
      });
    }
  }
}

// Rounds half to even (the default MXCSR mode) and clamps to -127 .. 127.
inline __m256i Codes127(__m256 x) {
  const __m256i c = _mm256_cvtps_epi32(x);
  return _mm256_max_epi32(_mm256_min_epi32(c, _mm256_set1_epi32(127)), _mm256_set1_epi32(-127));
}

// 16 int32 codes (two vectors of 8) as 16 bytes in order.
inline __m128i Bytes16(__m256i lo, __m256i hi) {
  const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(lo, hi), 0xD8);
  return _mm_packs_epi16(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
}

void QuantizeRotated(const float* x, int64_t stride, int rows, int d, int dp, const float* center,
                     int8_t* codes, float* scale, int32_t* sum) {
  const int halves = dp / 8;
  const __m256 quarter = _mm256_set1_ps(0.25f);
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + r * stride;
    PrefetchRowAhead(xr, stride, r, rows, d);
    __m256 y[kMaxDp / 8];
    __m256 amax = _mm256_setzero_ps();
    for (int b = 0; b < halves; ++b) {
      const __m256i lanes = avx2::FirstLanes(d - 8 * b);
      __m256 v = _mm256_maskload_ps(xr + 8 * b, lanes);
      if (center != nullptr) {
        v = _mm256_sub_ps(v, _mm256_maskload_ps(center + r * dp + 8 * b, lanes));
      }
      y[b] = avx2::Hadamard8(v);
    }
    // Stage h = 8 joins the two halves of each 16-dim block, then the 1/4.
    for (int b = 0; b < halves; b += 2) {
      const __m256 lo = y[b], hi = y[b + 1];
      y[b] = _mm256_mul_ps(_mm256_add_ps(lo, hi), quarter);
      y[b + 1] = _mm256_mul_ps(_mm256_sub_ps(lo, hi), quarter);
      amax = _mm256_max_ps(amax, Simd<Avx2>::Abs(y[b]));
      amax = _mm256_max_ps(amax, Simd<Avx2>::Abs(y[b + 1]));
    }
    const float m = avx2::MaxOf(amax);
    const __m256 inv = _mm256_set1_ps(m > 0.0f ? 127.0f / m : 0.0f);
    __m256i total = _mm256_setzero_si256();
    for (int b = 0; b < halves; b += 2) {
      const __m256i lo = Codes127(_mm256_mul_ps(y[b], inv));
      const __m256i hi = Codes127(_mm256_mul_ps(y[b + 1], inv));
      total = _mm256_add_epi32(total, _mm256_add_epi32(lo, hi));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + r * dp + 8 * b), Bytes16(lo, hi));
    }
    scale[r] = m / 127.0f;
    sum[r] = avx2::SumOf(total);
  }
}

// Four tokens' codes of 8 dims packed per dim: byte t of lane i is token t's code.
void QuantizeValues(const float* x, int64_t stride, int rows, int d, int dp, const float* mean,
                    const float* inv_scale, int8_t* group) {
  const __m256i low_byte = _mm256_set1_epi32(0xff);
  for (int quad = 0; quad < kKeyGroup / 4; ++quad) {
    for (int b = 0; b < dp / 8; ++b) {
      const __m256i lanes = avx2::FirstLanes(d - 8 * b);
      const __m256 mu = _mm256_maskload_ps(mean + 8 * b, lanes);
      const __m256 inv = _mm256_maskload_ps(inv_scale + 8 * b, lanes);
      __m256i packed = _mm256_setzero_si256();
      for (int t = 0; t < 4; ++t) {
        const int j = 4 * quad + t;
        if (j >= rows) break;
        const __m256 v = _mm256_maskload_ps(x + j * stride + 8 * b, lanes);
        const __m256i c = Codes127(_mm256_mul_ps(_mm256_sub_ps(v, mu), inv));
        packed = _mm256_or_si256(packed, _mm256_slli_epi32(_mm256_and_si256(c, low_byte), 8 * t));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(group + (int64_t{quad} * dp + 8 * b) * 4),
                          packed);
    }
  }
}

}  // namespace

Int8AttentionKernels Avx2Int8AttentionKernels() {
  return {QkI8, SoftmaxInChunks<SoftmaxRows>, PvI8, QuantizeRotated, QuantizeValues};
}

}  // namespace qvl::kernels
