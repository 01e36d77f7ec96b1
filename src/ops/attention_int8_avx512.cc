// AVX-512 int8 flash-attention kernels for CPUs without VNNI (Skylake-SP and -X): the AVX2
// kernels' products at twice the width. vpmaddubsw's pair sums of 255 x 127 overflow
// int16, so both products widen the packed groups to int16 as they are read (vpmovsxbw)
// and multiply them with vpmaddwd, whose pair sums are int32: the integer sums are exactly
// the vpdpbusd tiers'. The other operand (query codes, probabilities) is widened once per
// call, so a row's four values broadcast straight from memory as one 64-bit lane.
//
// vpmaddwd leaves each output as two int32 halves in adjacent lanes (dims 0-1 and 2-3 of
// a key, tokens 0-1 and 2-3 of a value dim); JoinPairs adds them at the end of a tile.
// The softmax and the quantizers are attention_int8_avx512.h's. Built with the AVX-512
// F/BW flags only.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "ops/attention_int8_avx512.h"
#include "ops/attention_int8_kernels.h"
#include "ops/attention_tiles.h"
#include "ops/simd_avx2.h"

namespace qvl::kernels {
namespace {

// q.k tiles: 8 rows x 2 accumulators + 2 widened key vectors + 1 broadcast.
constexpr int kQkRows = 8;
// p.v tiles: 6 rows x 2 column vectors x 2 accumulators + 4 widened value vectors + 1.
constexpr int kPvRows = 6, kPvColumns = 2;

inline __m512i Widen16(const int8_t* p) {
  return _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// The four int16 at p in every 64-bit lane.
inline __m512i Broadcast4(const int16_t* p) {
  int64_t v;
  std::memcpy(&v, p, 8);
  return _mm512_set1_epi64(v);
}

// The 16 sums of two vpmaddwd accumulators holding outputs 0-7 and 8-15 as lane pairs.
inline __m512i JoinPairs(__m512i lo, __m512i hi) {
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  return _mm512_add_epi32(_mm512_permutex2var_epi32(lo, even, hi),
                          _mm512_permutex2var_epi32(lo, odd, hi));
}

// acc += the pair sums of a * b (int16) per 32-bit lane. The empty asm pins acc to a
// register: without it GCC 12 keeps a tile's accumulators on the stack, adding to them in
// memory on every step.
inline void AddProducts(__m512i& acc, __m512i a, __m512i b) {
  acc = _mm512_add_epi32(acc, _mm512_madd_epi16(a, b));
  asm("" : "+v"(acc));
}

// Scores of MR widened query rows (dp apart) against the 16 keys of each of NG groups, one
// group at a time. Out of line, as the tiles of the other tiers: inlined beside the other
// instantiations, GCC 12 keeps the accumulators on the stack.
template <int MR, int NG>
__attribute__((noinline)) void QkTile(const int16_t* q, const int8_t* k, const int32_t* corr,
                                      int dp, int32_t* s, int64_t lds) {
  const int64_t gb = Int8GroupLayout::GroupBytes(dp);
  for (int g = 0; g < NG; ++g) {
    __m512i acc[MR][2];
    QVL_UNROLL_TILE
    for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_si512();
    // Key(j, i): 4 dims of 16 tokens per 64 bytes; tokens 0-7, then 8-15.
    for (int i = 0; i < dp; i += 4) {
      const __m512i k0 = Widen16(k + g * gb + i * kKeyGroup);
      const __m512i k1 = Widen16(k + g * gb + i * kKeyGroup + 32);
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) {
        const __m512i qv = Broadcast4(q + r * dp + i);
        AddProducts(acc[r][0], k0, qv);
        AddProducts(acc[r][1], k1, qv);
      }
    }
    const __m512i cv = _mm512_loadu_si512(corr + g * kKeyGroup);
    QVL_UNROLL_TILE
    for (int r = 0; r < MR; ++r) {
      _mm512_storeu_si512(s + r * lds + g * kKeyGroup,
                          _mm512_add_epi32(JoinPairs(acc[r][0], acc[r][1]), cv));
    }
  }
}

void QkI8(const uint8_t* q, int64_t ldq, int rows, const int8_t* k, const int32_t* k_corr,
          int n_groups, int dp, int32_t* s, int64_t lds) {
  alignas(64) int16_t wide[kInt8MaxRows * kMaxDp];
  for (int r0 = 0; r0 < rows; r0 += kInt8MaxRows) {
    const int n = std::min(kInt8MaxRows, rows - r0);
    avx2::WidenBytes(q + r0 * ldq, ldq, n, dp, wide, dp);
    ForQkTiles<kQkRows>(n, n_groups, [&]<int MR, int NG>(int r) {
      QkTile<MR, NG>(wide + r * dp, k, k_corr, dp, s + (r0 + r) * lds, lds);
    });
  }
}

// MR widened probability rows (kKeyBlock apart) times the values of NC x 16 dims from c0,
// over the key quads of all NG groups (contiguous: quad q's values start at byte 4 q dp).
template <int MR, int NC, int NG>
__attribute__((noinline)) void PvTile(const int16_t* p, const int8_t* v, int dp, int c0,
                                      const float* alpha, const float* p_scale, float* o,
                                      int64_t ldo) {
  // Vector 2c holds dims c0 + 16c .. + 7 as lane pairs, vector 2c + 1 the next 8.
  constexpr int NV = 2 * NC;
  __m512i acc[MR][NV];
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    QVL_UNROLL_TILE
    for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_setzero_si512();
  }
  for (int quad = 0; quad < NG * kKeyGroup / 4; ++quad) {
    // Value(j, i): the 4 tokens of each dim in 4 bytes.
    const int8_t* vq = v + (int64_t{quad} * dp + c0) * 4;
    __m512i vv[NV];
    QVL_UNROLL_TILE
    for (int c = 0; c < NV; ++c) vv[c] = Widen16(vq + 32 * c);
    QVL_UNROLL_TILE
    for (int r = 0; r < MR; ++r) {
      const __m512i pv = Broadcast4(p + r * kKeyBlock + 4 * quad);
      QVL_UNROLL_TILE
      for (int c = 0; c < NV; ++c) {
        AddProducts(acc[r][c], vv[c], pv);
      }
    }
  }
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    const __m512 a = _mm512_set1_ps(alpha[r]), ps = _mm512_set1_ps(p_scale[r]);
    float* orow = o + r * ldo + c0;
    QVL_UNROLL_TILE
    for (int c = 0; c < NC; ++c) {
      const __m512 old = _mm512_mul_ps(_mm512_loadu_ps(orow + 16 * c), a);
      const __m512i sum = JoinPairs(acc[r][2 * c], acc[r][2 * c + 1]);
      _mm512_storeu_ps(orow + 16 * c, _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), ps, old));
    }
  }
}

void PvI8(const uint8_t* p, int64_t ldp, int rows, const int8_t* v, int n_groups, int dp,
          const float* alpha, const float* p_scale, float* o, int64_t ldo) {
  alignas(64) int16_t wide[kInt8MaxRows * kKeyBlock];
  for (int r0 = 0; r0 < rows; r0 += kInt8MaxRows) {
    const int n = std::min(kInt8MaxRows, rows - r0);
    avx2::WidenBytes(p + r0 * ldp, ldp, n, n_groups * kKeyGroup, wide, kKeyBlock);
    for (int r = 0; r < n; r += kPvRows) {
      WithCount<kPvRows>(std::min(kPvRows, n - r), [&]<int MR>() {
        WithCount<kMaxGroups>(n_groups, [&]<int NG>() {
          const int i = r0 + r;
          for (int c0 = 0; c0 < dp; c0 += 16 * kPvColumns) {
            WithCount<kPvColumns>(std::min(kPvColumns, (dp - c0) / 16), [&]<int NC>() {
              PvTile<MR, NC, NG>(wide + r * kKeyBlock, v, dp, c0, alpha + i, p_scale + i,
                                 o + i * ldo, ldo);
            });
          }
        });
      });
    }
  }
}

}  // namespace

Int8AttentionKernels Avx512Int8AttentionKernels() {
  return {QkI8, SoftmaxInChunks<SoftmaxRows>, PvI8, QuantizeRotated, QuantizeValues};
}

}  // namespace qvl::kernels
