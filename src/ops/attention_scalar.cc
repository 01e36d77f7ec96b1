// Plain C++ twins of the flash-attention block kernels: the reference every SIMD tier is
// tested against, and the kernels of CPUs without a SIMD tier.
#include <cmath>
#include <limits>

#include "base/bf16.h"
#include "ops/attention_kernels.h"

namespace qvl::kernels {
namespace {

inline float Widen(float v) { return v; }
inline float Widen(uint16_t v) { return Bf16ToF32(v); }

inline void Narrow(float v, float* out) { *out = v; }
inline void Narrow(float v, uint16_t* out) { *out = F32ToBf16(v); }

template <typename T, typename Layout>
void Qk(const T* q, int64_t ldq, int rows, const T* const* k_groups, int n_groups, int d, float* s,
        int64_t lds, Layout key) {
  for (int r = 0; r < rows; ++r) {
    for (int g = 0; g < n_groups; ++g) {
      for (int j = 0; j < kKeyGroup; ++j) {
        float acc = 0.0f;
        for (int i = 0; i < d; ++i) acc += Widen(q[r * ldq + i]) * Widen(k_groups[g][key(j, i, d)]);
        s[r * lds + g * kKeyGroup + j] = acc;
      }
    }
  }
}

template <typename T>
void Softmax(const float* s, int64_t lds, int rows, int cols, const int* valid, float scale_log2,
             float* m, float* l, float* alpha, T* p, int64_t ldp) {
  for (int r = 0; r < rows; ++r) {
    const float* sr = s + r * lds;
    T* pr = p + r * ldp;
    const int n = valid[r];
    if (n <= 0) {
      alpha[r] = 1.0f;
      for (int c = 0; c < cols; ++c) Narrow(0.0f, pr + c);
      continue;
    }
    float mx = -std::numeric_limits<float>::infinity();
    for (int c = 0; c < n; ++c) mx = std::fmax(mx, sr[c] * scale_log2);
    const float m_new = std::fmax(m[r], mx);
    alpha[r] = std::exp2(m[r] - m_new);
    float sum = 0.0f;
    for (int c = 0; c < n; ++c) {
      const float e = std::exp2(sr[c] * scale_log2 - m_new);
      sum += e;
      Narrow(e, pr + c);
    }
    for (int c = n; c < cols; ++c) Narrow(0.0f, pr + c);
    for (int i = 0; i < kSumLanes; ++i) l[r * kSumLanes + i] *= alpha[r];
    l[r * kSumLanes] += sum;
    m[r] = m_new;
  }
}

template <typename T, typename Layout>
void Pv(const T* p, int64_t ldp, int rows, const T* const* v_groups, int n_groups, int d,
        const float* alpha, float* o, int64_t ldo, Layout value) {
  for (int r = 0; r < rows; ++r) {
    float* orow = o + r * ldo;
    for (int i = 0; i < d; ++i) {
      float acc = 0.0f;
      for (int g = 0; g < n_groups; ++g) {
        for (int j = 0; j < kKeyGroup; ++j) {
          acc += Widen(p[r * ldp + g * kKeyGroup + j]) * Widen(v_groups[g][value(j, i, d)]);
        }
      }
      orow[i] = orow[i] * alpha[r] + acc;
    }
  }
}

void QkF32(const float* q, int64_t ldq, int rows, const float* const* k_groups, int n_groups, int d,
           float* s, int64_t lds) {
  Qk(q, ldq, rows, k_groups, n_groups, d, s, lds, KvGroupLayout::KeyF32);
}

void QkBf16(const uint16_t* q, int64_t ldq, int rows, const uint16_t* const* k_groups, int n_groups,
            int d, float* s, int64_t lds) {
  Qk(q, ldq, rows, k_groups, n_groups, d, s, lds, KvGroupLayout::KeyBf16);
}

void PvF32(const float* p, int64_t ldp, int rows, const float* const* v_groups, int n_groups, int d,
           const float* alpha, float* o, int64_t ldo) {
  Pv(p, ldp, rows, v_groups, n_groups, d, alpha, o, ldo, KvGroupLayout::ValueF32);
}

void PvBf16(const uint16_t* p, int64_t ldp, int rows, const uint16_t* const* v_groups, int n_groups,
            int d, const float* alpha, float* o, int64_t ldo) {
  Pv(p, ldp, rows, v_groups, n_groups, d, alpha, o, ldo, KvGroupLayout::ValueBf16);
}

void DequantKvI8(const int8_t* codes, const float* scales, int d, bool values, uint16_t* out) {
  for (int j = 0; j < kKeyGroup; ++j) {
    for (int i = 0; i < d; ++i) {
      const int64_t at =
          values ? KvGroupLayout::ValueBf16(j, i, d) : KvGroupLayout::KeyBf16(j, i, d);
      out[at] = F32ToBf16(static_cast<float>(codes[at]) * scales[i / kKvI8Block * kKeyGroup + j]);
    }
  }
}

}  // namespace

AttentionKernels ScalarAttentionKernels() {
  return {QkF32, QkBf16, Softmax<float>, Softmax<uint16_t>, PvF32, PvBf16, DequantKvI8};
}

AttentionKernels AttentionKernelsFor(CpuTier tier) {
#if defined(__x86_64__)
  switch (tier) {
    case CpuTier::kAmx:
    case CpuTier::kAvx512Bf16:
      return Avx512Bf16AttentionKernels();
    case CpuTier::kAvx512Vnni:
    case CpuTier::kAvx512:
      return Avx512AttentionKernels();
    case CpuTier::kAvxVnni:
    case CpuTier::kAvx2:
      return Avx2AttentionKernels();
    default:
      break;
  }
#endif
#if defined(__aarch64__)
  if (tier == CpuTier::kNeon) return NeonAttentionKernels();
#endif
  (void)tier;
  return ScalarAttentionKernels();
}

AttentionKernels FullAttentionKernelsFor(CpuTier tier) {
#if defined(__x86_64__)
  if (tier == CpuTier::kAmx) return AmxAttentionKernels();
#endif
  return AttentionKernelsFor(tier);
}

}  // namespace qvl::kernels
