// NEON int8 flash-attention kernels for every 64-bit ARM (ARMv8.0 Advanced SIMD): the
// products on smull + sadalp (attention_int8_neon.h has their shape), the online softmax on
// the shared exp2 polynomials over Simd<Neon>, and the quantizers, whose codes are the
// scalar twin's bit for bit. The sdot tier (attention_int8_neon_dotprod.cc) takes this
// file's softmax and quantizers.
#include <arm_neon.h>

#include <cstdint>
#include <cstring>
#include <limits>

#include "ops/attention_int8_kernels.h"
#include "ops/attention_int8_neon.h"
#include "ops/attention_tiles.h"
#include "ops/simd_math.h"
#include "ops/simd_neon.h"

namespace qvl::kernels {
namespace {

// smull multiplies 8 bytes of a key (or value) quad register by the broadcast quad of a
// row, smlal adds the next quad's products: two products of codes in -127 .. 127 times
// -128 .. 127 fit int16. sadalp then adds pairs into int32 lanes (one output's dims 0-1
// and 2-3), and one addp per 4 outputs joins them. 2 rows x 16 outputs: 16 accumulators.
struct MullProducts {
  static constexpr int kRows = 2;

  static int8x16_t BroadcastQuad(const int8_t* p) {
    int32_t w;
    std::memcpy(&w, p, 4);
    return vreinterpretq_s8_s32(vdupq_n_s32(w));
  }

  template <int MR>
  static void Tile(const int8_t* a, int64_t lda, const int8_t* b, int64_t bstride, int quads,
                   int32x4_t (&out)[MR][4]) {
    int32x4_t acc[MR][8];
    QVL_UNROLL_TILE
    for (int r = 0; r < MR; ++r) {
      QVL_UNROLL_TILE
      for (int c = 0; c < 8; ++c) acc[r][c] = vdupq_n_s32(0);
    }
    for (int qd = 0; qd < quads; qd += 2) {
      int8x16_t a0[MR], a1[MR];
      QVL_UNROLL_TILE
      for (int r = 0; r < MR; ++r) {
        a0[r] = BroadcastQuad(a + r * lda + 4 * qd);
        a1[r] = BroadcastQuad(a + r * lda + 4 * qd + 4);
      }
      const int8_t* b0 = b + qd * bstride;
      QVL_UNROLL_TILE
      for (int n = 0; n < 4; ++n) {
        const int8x16_t x0 = vld1q_s8(b0 + 16 * n), x1 = vld1q_s8(b0 + bstride + 16 * n);
        QVL_UNROLL_TILE
        for (int r = 0; r < MR; ++r) {
          int16x8_t lo = vmull_s8(vget_low_s8(x0), vget_low_s8(a0[r]));
          lo = vmlal_s8(lo, vget_low_s8(x1), vget_low_s8(a1[r]));
          int16x8_t hi = vmull_high_s8(x0, a0[r]);
          hi = vmlal_high_s8(hi, x1, a1[r]);
          acc[r][2 * n] = vpadalq_s16(acc[r][2 * n], lo);
          acc[r][2 * n + 1] = vpadalq_s16(acc[r][2 * n + 1], hi);
        }
      }
    }
    QVL_UNROLL_TILE
    for (int r = 0; r < MR; ++r) {
      QVL_UNROLL_TILE
      for (int n = 0; n < 4; ++n) out[r][n] = vpaddq_s32(acc[r][2 * n], acc[r][2 * n + 1]);
    }
  }

  static void Sums(const int8_t* b, int64_t bstride, int quads, int32x4_t (&sum)[4]) {
    QVL_UNROLL_TILE
    for (int n = 0; n < 4; ++n) sum[n] = vdupq_n_s32(0);
    for (int qd = 0; qd < quads; ++qd) {
      QVL_UNROLL_TILE
      for (int n = 0; n < 4; ++n) {
        sum[n] = vpadalq_s16(sum[n], vpaddlq_s8(vld1q_s8(b + qd * bstride + 16 * n)));
      }
    }
  }
};

using S = Simd<Neon>;

// The vpdpbusd tier's three passes (the scaled scores, kept in L1 for the third, and their
// block maxima; references and scales of 8 rows at a time, one exp2 for both; probability
// codes), on 4-lane vectors. At most kInt8MaxRows rows.
void SoftmaxRows(const int32_t* s, int64_t lds, int rows, int cols, int valid,
                 const float* row_scale, const float* k_scale, float* m, float* l, float* alpha,
                 float* p_scale, uint8_t* p, int64_t ldp) {
  static_assert(kSumLanes == 16);
  const int n = valid < cols ? valid : cols;
  if (n <= 0) {
    EmptyBlock(rows, cols, alpha, p_scale, p, ldp);
    return;
  }
  const float32x4_t neg_inf = vdupq_n_f32(-std::numeric_limits<float>::infinity());
  alignas(16) float mb[kInt8MaxRows];
  alignas(16) float xs[kInt8MaxRows][kKeyBlock];
  for (int r = 0; r < rows; ++r) {
    const float32x4_t rs = vdupq_n_f32(row_scale[r]);
    float32x4_t mx = neg_inf;
    for (int c = 0; c < cols; c += 4) {
      // x = s * (k_scale * row_scale), as the scalar twin rounds it.
      const float32x4_t x = vmulq_f32(vcvtq_f32_s32(vld1q_s32(s + r * lds + c)),
                                      vmulq_f32(vld1q_f32(k_scale + c), rs));
      vst1q_f32(xs[r] + c, x);
      if (c < n) mx = vbslq_f32(neon::FirstLanes(n - c), vmaxq_f32(mx, x), mx);
    }
    mb[r] = vmaxvq_f32(mx);
  }
  const float32x4_t one = vdupq_n_f32(1.0f), inv255 = vdupq_n_f32(1.0f / 255.0f);
  for (int r0 = 0; r0 < rows; r0 += 8) {
    const int left = rows - r0;
    const S::V mo = S::Load(m + r0, left), mbv = S::Load(mb + r0, left);
    // |m - mb| is +inf for the first block; alpha and p_scale are set apart for it.
    const S::V e = simd::Exp2NonPositive<Neon>(S::Sub(S::Min(mo, mbv), S::Max(mo, mbv)));
    S::V a, ps, mn;
    auto half = [&](float32x4_t old, float32x4_t block, float32x4_t ex, float32x4_t& a_out,
                    float32x4_t& ps_out, float32x4_t& m_out) {
      const uint32x4_t first = vceqq_f32(old, neg_inf), grew = vcltq_f32(old, block);
      a_out = vbslq_f32(first, vdupq_n_f32(0.0f), vbslq_f32(grew, ex, one));
      ps_out = vbslq_f32(first, inv255, vmulq_f32(vbslq_f32(grew, one, ex), inv255));
      m_out = vmaxq_f32(old, block);
    };
    half(mo.lo, mbv.lo, e.lo, a.lo, ps.lo, mn.lo);
    half(mo.hi, mbv.hi, e.hi, a.hi, ps.hi, mn.hi);
    S::Store(alpha + r0, left, a);
    S::Store(p_scale + r0, left, ps);
    S::Store(m + r0, left, mn);
  }
  for (int r = 0; r < rows; ++r) {
    uint8_t* pr = p + r * ldp;
    const float32x4_t mbv = vdupq_n_f32(mb[r]);
    int32x4_t sum = vdupq_n_s32(0);
    for (int c = 0; c < cols; c += 8) {
      // Padding keys may score above the block maximum: clamp to 0 before the exp2.
      const S::V y = {vminq_f32(vsubq_f32(vld1q_f32(xs[r] + c), mbv), vdupq_n_f32(0.0f)),
                      vminq_f32(vsubq_f32(vld1q_f32(xs[r] + c + 4), mbv), vdupq_n_f32(0.0f))};
      const S::V e = simd::Exp2NonPositiveTimes255<Neon>(y);
      const int32x4_t lo =
          vandq_s32(vcvtnq_s32_f32(e.lo), vreinterpretq_s32_u32(neon::FirstLanes(n - c)));
      const int32x4_t hi =
          vandq_s32(vcvtnq_s32_f32(e.hi), vreinterpretq_s32_u32(neon::FirstLanes(n - c - 4)));
      sum = vaddq_s32(sum, vaddq_s32(lo, hi));
      vst1_u8(pr + c, vqmovn_u16(vcombine_u16(vqmovun_s32(lo), vqmovun_s32(hi))));
    }
    const float32x4_t a = vdupq_n_f32(alpha[r]);
    float* lr = l + r * kSumLanes;
    vst1q_f32(lr,
              vfmaq_f32(vmulq_f32(vld1q_f32(lr), a), vcvtq_f32_s32(sum), vdupq_n_f32(p_scale[r])));
    for (int i = 4; i < kSumLanes; i += 4) vst1q_f32(lr + i, vmulq_f32(vld1q_f32(lr + i), a));
  }
}

// The first n (may be <= 0 or >= 4) floats at p, zeros after.
inline float32x4_t Load4(const float* p, int64_t n) {
  return n >= 4 ? vld1q_f32(p) : neon::LoadPartial(p, n);
}

// The scalar twin's butterflies on one block of 16 dims (4 per register), in its order:
// h = 1 and 2 inside each register (each lane sums or subtracts the same two values as
// the twin), h = 4 and 8 across them, then the factor.
inline void Hadamard16(float32x4_t (&y)[4]) {
  const uint32x4_t even = {~0u, 0u, ~0u, 0u};
  QVL_UNROLL_TILE
  for (int i = 0; i < 4; ++i) {
    const float32x4_t sw = vrev64q_f32(y[i]);  // lanes 1, 0, 3, 2
    y[i] = vbslq_f32(even, vaddq_f32(y[i], sw), vsubq_f32(sw, y[i]));
  }
  QVL_UNROLL_TILE
  for (int i = 0; i < 4; ++i) {
    const float32x4_t sw = vextq_f32(y[i], y[i], 2);  // lanes 2, 3, 0, 1
    y[i] = vcombine_f32(vget_low_f32(vaddq_f32(y[i], sw)), vget_high_f32(vsubq_f32(sw, y[i])));
  }
  auto butterfly = [&](int j, int h) {
    const float32x4_t a = y[j], c = y[j + h];
    y[j] = vaddq_f32(a, c);
    y[j + h] = vsubq_f32(a, c);
  };
  butterfly(0, 1);
  butterfly(2, 1);
  butterfly(0, 2);
  butterfly(1, 2);
  QVL_UNROLL_TILE
  for (int i = 0; i < 4; ++i) y[i] = vmulq_f32(y[i], vdupq_n_f32(0.25f));
}

// Rounds half to even and clamps to -127 .. 127.
inline int32x4_t Codes127(float32x4_t x) {
  return vmaxq_s32(vminq_s32(vcvtnq_s32_f32(x), vdupq_n_s32(127)), vdupq_n_s32(-127));
}

// 16 codes in -127 .. 127 as bytes in order.
inline int8x16_t Bytes16(const int32x4_t (&c)[4]) {
  return vcombine_s8(vmovn_s16(vcombine_s16(vmovn_s32(c[0]), vmovn_s32(c[1]))),
                     vmovn_s16(vcombine_s16(vmovn_s32(c[2]), vmovn_s32(c[3]))));
}

void QuantizeRotated(const float* x, int64_t stride, int rows, int d, int dp, const float* center,
                     int8_t* codes, float* scale, int32_t* sum) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + r * stride;
    PrefetchRowAhead(xr, stride, r, rows, d);
    float32x4_t y[kMaxDp / 4];
    float32x4_t amax = vdupq_n_f32(0.0f);
    for (int b = 0; b < dp; b += 16) {
      float32x4_t v[4];
      QVL_UNROLL_TILE
      for (int i = 0; i < 4; ++i) {
        const int64_t left = d - b - 4 * i;
        v[i] = Load4(xr + b + 4 * i, left);
        if (center != nullptr) v[i] = vsubq_f32(v[i], Load4(center + r * dp + b + 4 * i, left));
      }
      Hadamard16(v);
      QVL_UNROLL_TILE
      for (int i = 0; i < 4; ++i) {
        y[b / 4 + i] = v[i];
        // std::max(amax, |y|) as the twin: a NaN keeps amax.
        amax = neon::MaxOrSecond(vabsq_f32(v[i]), amax);
      }
    }
    const float m = vmaxvq_f32(amax);
    const float32x4_t inv = vdupq_n_f32(m > 0.0f ? 127.0f / m : 0.0f);
    int32x4_t total = vdupq_n_s32(0);
    for (int b = 0; b < dp; b += 16) {
      int32x4_t c[4];
      QVL_UNROLL_TILE
      for (int i = 0; i < 4; ++i) {
        c[i] = Codes127(vmulq_f32(y[b / 4 + i], inv));
        total = vaddq_s32(total, c[i]);
      }
      vst1q_s8(codes + r * dp + b, Bytes16(c));
    }
    scale[r] = m / 127.0f;
    sum[r] = vaddvq_s32(total);
  }
}

// Four tokens' codes of 16 dims, interleaved by st4 into the group's dim-major order.
void QuantizeValues(const float* x, int64_t stride, int rows, int d, int dp, const float* mean,
                    const float* inv_scale, int8_t* group) {
  for (int b = 0; b < dp; b += 16) {
    float32x4_t mu[4], inv[4];
    QVL_UNROLL_TILE
    for (int i = 0; i < 4; ++i) {
      mu[i] = Load4(mean + b + 4 * i, d - b - 4 * i);
      inv[i] = Load4(inv_scale + b + 4 * i, d - b - 4 * i);
    }
    for (int quad = 0; quad < kKeyGroup / 4; ++quad) {
      int8x16x4_t tokens;
      QVL_UNROLL_TILE
      for (int t = 0; t < 4; ++t) {
        const int j = 4 * quad + t;
        int32x4_t c[4] = {};
        if (j < rows) {
          QVL_UNROLL_TILE
          for (int i = 0; i < 4; ++i) {
            const float32x4_t v = Load4(x + j * stride + b + 4 * i, d - b - 4 * i);
            c[i] = Codes127(vmulq_f32(vsubq_f32(v, mu[i]), inv[i]));
          }
        }
        tokens.val[t] = Bytes16(c);
      }
      vst4q_s8(group + (int64_t{quad} * dp + b) * 4, tokens);
    }
  }
}

}  // namespace

Int8AttentionKernels NeonInt8AttentionKernels() {
  return {neon_int8::QkI8<MullProducts>, SoftmaxInChunks<SoftmaxRows>,
          neon_int8::PvI8<MullProducts>, QuantizeRotated, QuantizeValues};
}

}  // namespace qvl::kernels
