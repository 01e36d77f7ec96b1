// NEON flash-attention block kernels (4 f32 lanes, 32 registers): q.k tiles of up to 4
// query rows times one 16-key group, p.v tiles of up to 4 rows times 16 output dims, both
// 16 accumulators. q and p enter through lane-indexed fmla: one load brings 4 dims (q) or
// 4 keys (p) of a row, where a broadcast per element would cost a load per multiply. bf16
// keys and values are widened in registers by a shift, two fmla per packed pair, in the
// order of the other tiers.
#include <arm_neon.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/bf16.h"
#include "ops/attention_kernels.h"
#include "ops/attention_tiles.h"
#include "ops/simd_math.h"
#include "ops/simd_neon.h"

namespace qvl::kernels {
namespace {

using S = Simd<Neon>;
using neon::EvenHalves;
using neon::OddHalves;
using neon::WidenBf16;

constexpr int kRows = 4;

// fn.template operator()<L>() for the lanes L = 0 .. 3, unrolled: fmla by element needs
// its lane as a constant.
template <typename Fn>
inline void ForLanes(const Fn& fn) {
  fn.template operator()<0>();
  fn.template operator()<1>();
  fn.template operator()<2>();
  fn.template operator()<3>();
}

// 4 consecutive values of a row (dims of q, keys of p) as f32.
inline float32x4_t LoadQ(const float* q) { return vld1q_f32(q); }
inline float32x4_t LoadQ(const uint16_t* q) { return WidenBf16(vld1_u16(q)); }

// One key group (16 keys = 4 vectors) against MR query rows.
template <int MR, typename T>
void QkTile(const T* q, int64_t ldq, const T* kg, int d, float* s, int64_t lds) {
  float32x4_t acc[MR][4];
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    QVL_UNROLL_TILE
    for (int c = 0; c < 4; ++c) acc[r][c] = vdupq_n_f32(0.0f);
  }
  int i = 0;
  if constexpr (sizeof(T) == 4) {
    for (; i + 4 <= d; i += 4) {
      float32x4_t qv[MR];
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) qv[r] = LoadQ(q + r * ldq + i);
      ForLanes([&]<int L>() {
        const float* krow = kg + (i + L) * kKeyGroup;
        QVL_UNROLL_TILE
        for (int c = 0; c < 4; ++c) {
          const float32x4_t k = vld1q_f32(krow + 4 * c);
          QVL_UNROLL_TILE
          for (int r = 0; r < MR; ++r) acc[r][c] = vfmaq_laneq_f32(acc[r][c], k, qv[r], L);
        }
      });
    }
    for (; i < d; ++i) {
      QVL_UNROLL_TILE
      for (int c = 0; c < 4; ++c) {
        const float32x4_t k = vld1q_f32(kg + i * kKeyGroup + 4 * c);
        QVL_UNROLL_TILE
        for (int r = 0; r < MR; ++r) acc[r][c] = vfmaq_n_f32(acc[r][c], k, q[r * ldq + i]);
      }
    }
  } else {
    // Dims i, i + 1 of keys 4c .. 4c + 3 are the even and odd halves of 4 32-bit lanes;
    // they meet lanes L0 of q0 and L1 of q1.
    auto pair = [&]<int L0, int L1>(const uint16_t* kp, const float32x4_t(&q0)[MR],
                                    const float32x4_t(&q1)[MR]) {
      QVL_UNROLL_TILE
      for (int c = 0; c < 4; ++c) {
        const uint32x4_t x = vreinterpretq_u32_u16(vld1q_u16(kp + 8 * c));
        const float32x4_t e = EvenHalves(x), o = OddHalves(x);
        QVL_UNROLL_TILE
        for (int r = 0; r < MR; ++r) {
          acc[r][c] = vfmaq_laneq_f32(acc[r][c], e, q0[r], L0);
          acc[r][c] = vfmaq_laneq_f32(acc[r][c], o, q1[r], L1);
        }
      }
    };
    for (; i + 4 <= d; i += 4) {
      float32x4_t qv[MR];
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) qv[r] = LoadQ(q + r * ldq + i);
      pair.template operator()<0, 1>(kg + i * kKeyGroup, qv, qv);
      pair.template operator()<2, 3>(kg + (i + 2) * kKeyGroup, qv, qv);
    }
    if (i < d) {  // d is even: one pair left
      float32x4_t q0[MR], q1[MR];
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) {
        q0[r] = vdupq_n_f32(Bf16ToF32(q[r * ldq + i]));
        q1[r] = vdupq_n_f32(Bf16ToF32(q[r * ldq + i + 1]));
      }
      pair.template operator()<0, 0>(kg + i * kKeyGroup, q0, q1);
    }
  }
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    QVL_UNROLL_TILE
    for (int c = 0; c < 4; ++c) vst1q_f32(s + r * lds + 4 * c, acc[r][c]);
  }
}

template <typename T>
void Qk(const T* q, int64_t ldq, int rows, const T* const* kg, int n_groups, int d, float* s,
        int64_t lds) {
  for (int g = 0; g < n_groups; ++g) {
    float* sg = s + g * kKeyGroup;
    int r = 0;
    for (; r + kRows <= rows; r += kRows) {
      QkTile<kRows>(q + r * ldq, ldq, kg[g], d, sg + r * lds, lds);
    }
    if (r < rows) {
      WithCount<kRows - 1>(
          rows - r, [&]<int MR>() { QkTile<MR>(q + r * ldq, ldq, kg[g], d, sg + r * lds, lds); });
    }
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

// Lanes of v from `left` on replaced by `fill`.
inline S::V FirstOr(S::V v, int64_t left, float fill) {
  const float32x4_t f = vdupq_n_f32(fill);
  return {vbslq_f32(neon::FirstLanes(left), v.lo, f),
          vbslq_f32(neon::FirstLanes(left - 4), v.hi, f)};
}

inline void StoreP(float* p, int width, S::V v) { S::Store(p, width, v); }
inline void StoreP(uint16_t* p, int width, S::V v) {
  const uint16x8_t h = vcombine_u16(neon::RoundToBf16(v.lo), neon::RoundToBf16(v.hi));
  if (width >= 8) {
    vst1q_u16(p, h);
  } else {
    neon::StorePartial(p, width, h);
  }
}

template <typename T>
void Softmax(const float* s, int64_t lds, int rows, int cols, const int* valid, float scale_log2,
             float* m, float* l, float* alpha, T* p, int64_t ldp) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const S::V scale = S::Set(scale_log2);
  for (int r = 0; r < rows; ++r) {
    const float* sr = s + r * lds;
    T* pr = p + r * ldp;
    const int n = valid[r];
    if (n <= 0) {
      alpha[r] = 1.0f;
      std::memset(pr, 0, sizeof(T) * cols);
      continue;
    }
    S::V mx = S::Set(kNegInf);
    for (int c = 0; c < n; c += S::kLanes) {
      mx = S::Max(FirstOr(S::Load(sr + c, n - c), n - c, kNegInf), mx);
    }
    const float m_new = std::max(m[r], vmaxvq_f32(vmaxq_f32(mx.lo, mx.hi)) * scale_log2);
    const S::V mv = S::Set(m_new);
    S::V sum = S::Zero();
    for (int c = 0; c < cols; c += S::kLanes) {
      const S::V x = S::MulSub(S::Load(sr + c, cols - c), scale, mv);
      const S::V e = S::KeepFirst(simd::Exp2NonPositive<Neon>(x), n - c);
      sum = S::Add(sum, e);
      StoreP(pr + c, std::min(S::kLanes, cols - c), e);
    }
    const float a = m[r] == kNegInf ? 0.0f : std::exp2(m[r] - m_new);
    alpha[r] = a;
    for (int i = 0; i < kSumLanes; ++i) l[r * kSumLanes + i] *= a;
    l[r * kSumLanes] += S::ReduceAdd(sum);
    m[r] = m_new;
  }
}

// 4 output dims (f32) or 4 dims of a token pair (bf16) at v; kFull false: only the first
// `left` dims, zeros after.
template <bool kFull>
inline float32x4_t LoadV(const float* v, int left) {
  if (kFull || left >= 4) return vld1q_f32(v);
  return neon::LoadPartial(v, left);
}
template <bool kFull>
inline uint32x4_t LoadV(const uint16_t* v, int left) {
  if (kFull || left >= 4) return vreinterpretq_u32_u16(vld1q_u16(v));
  return vreinterpretq_u32_u16(neon::LoadPartial(v, 2 * left));
}

// o[MR rows][dims c0 .. c0 + 4 NC) = o * alpha + p . v over NG key groups, 4 keys per
// step of the loop, the groups unrolled inside, so the accumulators stay in registers.
// kFull: all 4 NC dims are inside the head.
template <int MR, int NC, int NG, bool kFull, typename T>
void PvTile(const T* p, int64_t ldp, const T* const* vg, int d, int c0, const float* alpha,
            float* o, int64_t ldo) {
  float32x4_t acc[MR][NC];
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    QVL_UNROLL_TILE
    for (int c = 0; c < NC; ++c) acc[r][c] = vdupq_n_f32(0.0f);
  }
  for (int j = 0; j < kKeyGroup; j += 4) {
    QVL_UNROLL_TILE
    for (int g = 0; g < NG; ++g) {
      float32x4_t pv[MR];
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) pv[r] = LoadQ(p + r * ldp + g * kKeyGroup + j);
      if constexpr (sizeof(T) == 4) {
        ForLanes([&]<int L>() {
          const float* vrow = vg[g] + (j + L) * d + c0;
          QVL_UNROLL_TILE
          for (int c = 0; c < NC; ++c) {
            const float32x4_t v = LoadV<kFull>(vrow + 4 * c, d - c0 - 4 * c);
            QVL_UNROLL_TILE
            for (int r = 0; r < MR; ++r) acc[r][c] = vfmaq_laneq_f32(acc[r][c], v, pv[r], L);
          }
        });
      } else {
        // Keys j, j + 1 (lanes 0, 1 of pv), then j + 2, j + 3 (lanes 2, 3).
        auto pair = [&]<int L>(const uint16_t* vpair) {
          QVL_UNROLL_TILE
          for (int c = 0; c < NC; ++c) {
            const uint32x4_t x = LoadV<kFull>(vpair + 8 * c, d - c0 - 4 * c);
            const float32x4_t e = EvenHalves(x), od = OddHalves(x);
            QVL_UNROLL_TILE
            for (int r = 0; r < MR; ++r) {
              acc[r][c] = vfmaq_laneq_f32(acc[r][c], e, pv[r], L);
              acc[r][c] = vfmaq_laneq_f32(acc[r][c], od, pv[r], L + 1);
            }
          }
        };
        pair.template operator()<0>(vg[g] + (j / 2) * (2 * d) + 2 * c0);
        pair.template operator()<2>(vg[g] + (j / 2 + 1) * (2 * d) + 2 * c0);
      }
    }
  }
  QVL_UNROLL_TILE
  for (int r = 0; r < MR; ++r) {
    float* orow = o + r * ldo + c0;
    QVL_UNROLL_TILE
    for (int c = 0; c < NC; ++c) {
      const int left = d - c0 - 4 * c;
      const float32x4_t y = vfmaq_n_f32(acc[r][c], LoadV<kFull>(orow + 4 * c, left), alpha[r]);
      if (kFull || left >= 4) {
        vst1q_f32(orow + 4 * c, y);
      } else {
        neon::StorePartial(orow + 4 * c, left, y);
      }
    }
  }
}

template <typename T>
void Pv(const T* p, int64_t ldp, int rows, const T* const* vg, int n_groups, int d,
        const float* alpha, float* o, int64_t ldo) {
  ForPvTiles<kRows, 4>(rows, n_groups, d, [&]<int MR, int NC, int NG>(int r, int c0) {
    if (c0 + 4 * NC <= d) {
      PvTile<MR, NC, NG, true>(p + r * ldp, ldp, vg, d, c0, alpha + r, o + r * ldo, ldo);
    } else {
      PvTile<MR, NC, NG, false>(p + r * ldp, ldp, vg, d, c0, alpha + r, o + r * ldo, ldo);
    }
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

}  // namespace

AttentionKernels NeonAttentionKernels() {
  // Dequantizing the int8 KV cache is the scalar twin's (the compiler vectorizes it).
  return {QkF32,
          QkBf16,
          Softmax<float>,
          Softmax<uint16_t>,
          PvF32,
          PvBf16,
          ScalarAttentionKernels().dequant_kv_i8};
}

}  // namespace qvl::kernels
