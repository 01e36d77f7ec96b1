// Plain C++ twins of the int8 flash-attention block kernels: the reference the vpdpbusd
// tier is tested against (integer results bit-identical), and the int8 kernels of the
// scalar tier.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/attention_int8_kernels.h"

namespace qvl::kernels {
namespace {

void QkI8(const uint8_t* q, int64_t ldq, int rows, const int8_t* k, const int32_t* k_corr,
          int n_groups, int dp, int32_t* s, int64_t lds) {
  for (int r = 0; r < rows; ++r) {
    for (int g = 0; g < n_groups; ++g) {
      const int8_t* kg = k + g * Int8GroupLayout::GroupBytes(dp);
      for (int j = 0; j < kKeyGroup; ++j) {
        int32_t acc = k_corr[g * kKeyGroup + j];
        for (int i = 0; i < dp; ++i) acc += q[r * ldq + i] * kg[Int8GroupLayout::Key(j, i)];
        s[r * lds + g * kKeyGroup + j] = acc;
      }
    }
  }
}

void SoftmaxI8(const int32_t* s, int64_t lds, int rows, int cols, int valid, const float* row_scale,
               const float* k_scale, float* m, float* l, float* alpha, float* p_scale, uint8_t* p,
               int64_t ldp) {
  const int n = std::min(valid, cols);
  for (int r = 0; r < rows; ++r) {
    uint8_t* pr = p + r * ldp;
    std::fill(pr, pr + cols, uint8_t{0});
    if (n <= 0) {
      alpha[r] = 1.0f;
      p_scale[r] = 0.0f;
      continue;
    }
    float x[kKeyBlock];
    float mb = -std::numeric_limits<float>::infinity();
    for (int c = 0; c < n; ++c) {
      x[c] = static_cast<float>(s[r * lds + c]) * (k_scale[c] * row_scale[r]);
      mb = std::fmax(mb, x[c]);
    }
    const float m_new = std::fmax(m[r], mb);
    alpha[r] = m[r] == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp2(m[r] - m_new);
    p_scale[r] = std::exp2(mb - m_new) / 255.0f;
    m[r] = m_new;
    int32_t sum = 0;
    for (int c = 0; c < n; ++c) {
      const float code = std::nearbyint(255.0f * std::exp2(x[c] - mb));
      pr[c] = static_cast<uint8_t>(std::clamp(code, 0.0f, 255.0f));
      sum += pr[c];
    }
    float* lr = l + r * kSumLanes;
    for (int i = 0; i < kSumLanes; ++i) lr[i] *= alpha[r];
    lr[0] += static_cast<float>(sum) * p_scale[r];
  }
}

void PvI8(const uint8_t* p, int64_t ldp, int rows, const int8_t* v, int n_groups, int dp,
          const float* alpha, const float* p_scale, float* o, int64_t ldo) {
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < dp; ++i) {
      int32_t acc = 0;
      for (int g = 0; g < n_groups; ++g) {
        const int8_t* vg = v + g * Int8GroupLayout::GroupBytes(dp);
        for (int j = 0; j < kKeyGroup; ++j) {
          acc += p[r * ldp + g * kKeyGroup + j] * vg[Int8GroupLayout::Value(j, i, dp)];
        }
      }
      o[r * ldo + i] = o[r * ldo + i] * alpha[r] + static_cast<float>(acc) * p_scale[r];
    }
  }
}

// Round half to even for |x| < 2^22 by the float adder itself: the baseline x86-64 build
// has no roundss, and nearbyint would be a library call per element.
inline int RoundToInt(float x) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: leaves no fraction bits
  return static_cast<int>((x + kMagic) - kMagic);
}

void RotateBlocks16(float* x, int dp) {
  for (int b = 0; b < dp; b += 16) {
    float* y = x + b;
    for (int h = 1; h < 16; h *= 2) {
      for (int i = 0; i < 16; i += 2 * h) {
        for (int j = i; j < i + h; ++j) {
          const float a = y[j], c = y[j + h];
          y[j] = a + c;
          y[j + h] = a - c;
        }
      }
    }
    for (int i = 0; i < 16; ++i) y[i] *= 0.25f;
  }
}

void QuantizeRotated(const float* x, int64_t stride, int rows, int d, int dp, const float* center,
                     int8_t* codes, float* scale, int32_t* sum) {
  float y[kMaxDp];
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + r * stride;
    for (int i = 0; i < d; ++i) y[i] = center ? xr[i] - center[r * dp + i] : xr[i];
    std::fill(y + d, y + dp, 0.0f);
    RotateBlocks16(y, dp);
    float amax = 0.0f;
    for (int i = 0; i < dp; ++i) amax = std::max(amax, std::fabs(y[i]));
    const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
    int32_t total = 0;
    for (int i = 0; i < dp; ++i) {
      const int code = std::clamp(RoundToInt(y[i] * inv), -127, 127);
      codes[r * dp + i] = static_cast<int8_t>(code);
      total += code;
    }
    scale[r] = amax / 127.0f;
    sum[r] = total;
  }
}

void QuantizeValues(const float* x, int64_t stride, int rows, int d, int dp, const float* mean,
                    const float* inv_scale, int8_t* group) {
  for (int j = 0; j < kKeyGroup; ++j) {
    for (int i = 0; i < dp; ++i) {
      int code = 0;
      if (j < rows && i < d) {
        code = std::clamp(RoundToInt((x[j * stride + i] - mean[i]) * inv_scale[i]), -127, 127);
      }
      group[Int8GroupLayout::Value(j, i, dp)] = static_cast<int8_t>(code);
    }
  }
}

}  // namespace

Int8AttentionKernels ScalarInt8AttentionKernels() {
  return {QkI8, SoftmaxI8, PvI8, QuantizeRotated, QuantizeValues};
}

Int8AttentionKernels Int8AttentionKernelsFor(CpuTier tier) {
  switch (tier) {
#if defined(__x86_64__)
    case CpuTier::kAmx:
    case CpuTier::kAvx512Bf16:
    case CpuTier::kAvx512Vnni:
      return Avx512VnniInt8AttentionKernels();
    case CpuTier::kAvxVnni:
      return AvxVnniInt8AttentionKernels();
    case CpuTier::kAvx512:
      return Avx512Int8AttentionKernels();
    case CpuTier::kAvx2:
      return Avx2Int8AttentionKernels();
#endif
#if defined(__aarch64__)
    case CpuTier::kNeon:
      return GetCpuFeatures().arm_dotprod ? NeonDotProdInt8AttentionKernels()
                                          : NeonInt8AttentionKernels();
#endif
    case CpuTier::kScalar:
      return ScalarInt8AttentionKernels();
    default:
      return {};
  }
}

}  // namespace qvl::kernels
