// AVX-VNNI int8 flash-attention kernels (the avxvnni tier: AVX2 with AVX-VNNI, no
// AVX-512): q.k and p.v on the 256-bit vpdpbusd, 8 int32 lanes, as the AVX512-VNNI
// kernels do on 16. The packed groups (Int8GroupLayout) are vpdpbusd's signed operand
// as they lie, so nothing is widened as on plain AVX2; the softmax and the quantizers
// are AVX2's. Built with the AVX2 flags and -mavxvnni only.
#include <immintrin.h>

#include <algorithm>

#include "ops/attention_int8_kernels.h"
#include "ops/attention_tiles.h"
#include "ops/packed_tiles.h"
#include "ops/simd_avx2.h"

namespace qvl::kernels {
namespace {

using avx2::DotBytesVnni;

// Rows per tile: 4 rows x 2 accumulators + 2 key or value vectors + 1 broadcast.
constexpr int kTileRows = 4;

inline __m256i LoadBytes(const void* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Scores of MR query rows against the 16 keys of each of NG groups, one group at a time.
template <int MR, int NG>
void QkTile(const uint8_t* q, int64_t ldq, const int8_t* k, const int32_t* corr, int dp, int32_t* s,
            int64_t lds) {
  const int64_t gb = Int8GroupLayout::GroupBytes(dp);
  for (int g = 0; g < NG; ++g) {
    __m256i acc[MR][2];
    const __m256i c0 = LoadBytes(corr + g * kKeyGroup), c1 = LoadBytes(corr + g * kKeyGroup + 8);
    QVL_UNROLL_TILE
    for (int r = 0; r < MR; ++r) {
      acc[r][0] = c0;
      acc[r][1] = c1;
    }
    // Key(j, i): 4 dims of 16 tokens per 64 bytes; tokens 0-7, then 8-15.
    for (int i = 0; i < dp; i += 4) {
      const __m256i k0 = LoadBytes(k + g * gb + i * kKeyGroup);
      const __m256i k1 = LoadBytes(k + g * gb + i * kKeyGroup + 32);
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) {
        const __m256i qv = _mm256_set1_epi32(Load32(q + r * ldq + i));
        DotBytesVnni(acc[r][0], qv, k0);
        DotBytesVnni(acc[r][1], qv, k1);
      }
    }
    QVL_UNROLL_TILE
    for (int r = 0; r < MR; ++r) {
      int32_t* sr = s + r * lds + g * kKeyGroup;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(sr), acc[r][0]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(sr + 8), acc[r][1]);
    }
  }
}

void QkI8(const uint8_t* q, int64_t ldq, int rows, const int8_t* k, const int32_t* k_corr,
          int n_groups, int dp, int32_t* s, int64_t lds) {
  ForQkTiles<kTileRows>(rows, n_groups, [&]<int MR, int NG>(int r) {
    QkTile<MR, NG>(q + r * ldq, ldq, k, k_corr, dp, s + r * lds, lds);
  });
}

// MR probability rows times the values of 16 dims from c0, over the key quads of all NG
// groups (contiguous: quad q's values start at byte 4 q dp). Out of line: inlined into
// PvI8 beside its other 15 instantiations, GCC 12 keeps the accumulators on the stack and
// the p.v products ran at half the speed.
template <int MR, int NG>
__attribute__((noinline)) void PvTile(const uint8_t* p, int64_t ldp, const int8_t* v, int dp,
                                      int c0, const float* alpha, const float* p_scale, float* o,
                                      int64_t ldo) {
  __m256i acc[MR][2];
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (int quad = 0; quad < NG * kKeyGroup / 4; ++quad) {
    const int8_t* vq = v + (int64_t{quad} * dp + c0) * 4;
    const __m256i v0 = LoadBytes(vq), v1 = LoadBytes(vq + 32);
    QVL_UNROLL_TILE
    for (int r = 0; r < MR; ++r) {
      const __m256i pv = _mm256_set1_epi32(Load32(p + r * ldp + 4 * quad));
      DotBytesVnni(acc[r][0], pv, v0);
      DotBytesVnni(acc[r][1], pv, v1);
    }
  }
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    const __m256 a = _mm256_set1_ps(alpha[r]), ps = _mm256_set1_ps(p_scale[r]);
    float* orow = o + r * ldo + c0;
    const __m256 old0 = _mm256_mul_ps(_mm256_loadu_ps(orow), a);
    const __m256 old1 = _mm256_mul_ps(_mm256_loadu_ps(orow + 8), a);
    _mm256_storeu_ps(orow, _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[r][0]), ps, old0));
    _mm256_storeu_ps(orow + 8, _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[r][1]), ps, old1));
  }
}

void PvI8(const uint8_t* p, int64_t ldp, int rows, const int8_t* v, int n_groups, int dp,
          const float* alpha, const float* p_scale, float* o, int64_t ldo) {
  for (int r = 0; r < rows; r += kTileRows) {
    WithCount<kTileRows>(std::min(kTileRows, rows - r), [&]<int MR>() {
      WithCount<kMaxGroups>(n_groups, [&]<int NG>() {
        for (int c0 = 0; c0 < dp; c0 += 16) {
          PvTile<MR, NG>(p + r * ldp, ldp, v, dp, c0, alpha + r, p_scale + r, o + r * ldo, ldo);
        }
      });
    });
  }
}

}  // namespace

Int8AttentionKernels AvxVnniInt8AttentionKernels() {
  Int8AttentionKernels k = Avx2Int8AttentionKernels();
  k.qk = QkI8;
  k.pv = PvI8;
  return k;
}

}  // namespace qvl::kernels
