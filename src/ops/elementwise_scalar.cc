// Plain C++ twins of the element-wise kernels: the reference the SIMD tiers are tested
// against, computed with libm (std::exp, std::erfc) and double sums.
#include <cmath>

#include "ops/elementwise_kernels.h"

#include "base/bf16.h"

namespace qvl::kernels {
namespace {

void RmsNormRow(const float* x, const float* w, int64_t dim, float eps, float* y) {
  double sum = 0.0;
  for (int64_t i = 0; i < dim; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float inv = 1.0f / std::sqrt(static_cast<float>(sum / dim) + eps);
  for (int64_t i = 0; i < dim; ++i) y[i] = w[i] * (x[i] * inv);
}

void LayerNormRow(const float* x, const float* w, const float* b, int64_t dim, float eps,
                  float* y) {
  double sum = 0.0;
  for (int64_t i = 0; i < dim; ++i) sum += x[i];
  const double mean = sum / dim;
  double var = 0.0;
  for (int64_t i = 0; i < dim; ++i) var += (x[i] - mean) * (x[i] - mean);
  const float inv = 1.0f / std::sqrt(static_cast<float>(var / dim) + eps);
  const float meanf = static_cast<float>(mean);
  for (int64_t i = 0; i < dim; ++i) y[i] = (x[i] - meanf) * inv * w[i] + b[i];
}

void RopeHead(float* x, int half, const float* cos, const float* sin, const float* w, float eps) {
  if (w != nullptr) RmsNormRow(x, w, 2 * half, eps, x);
  for (int i = 0; i < half; ++i) {
    const float a = x[i];
    const float b = x[i + half];
    x[i] = a * cos[i] - b * sin[i];
    x[i + half] = b * cos[i] + a * sin[i];
  }
}

// 0.5 (1 + tanh u) is written as 1 / (1 + e^-2u) and 1 + erf(-z) as erfc(z): the same
// functions without the cancellation that leaves no correct digit in the negative tail.
void GeluTanh(float* x, int64_t n) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float u = kSqrt2OverPi * (v + 0.044715f * v * v * v);
    x[i] = v / (1.0f + std::exp(-2.0f * u));
  }
}

void GeluErf(float* x, int64_t n) {
  constexpr float kInvSqrt2 = 0.7071067811865476f;
  for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * std::erfc(-x[i] * kInvSqrt2);
}

void SiluMul(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void Add(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void AddMinMax(const float* x, int64_t n, float* sum, float* lo, float* hi) {
  for (int64_t i = 0; i < n; ++i) {
    sum[i] += x[i];
    lo[i] = x[i] < lo[i] ? x[i] : lo[i];
    hi[i] = x[i] > hi[i] ? x[i] : hi[i];
  }
}

float MaxOf(const float* x, int64_t n) {
  float out = x[0];
  for (int64_t i = 1; i < n; ++i) out = x[i] > out ? x[i] : out;
  return out;
}

float SumExp(const float* x, int64_t n, float shift) {
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(x[i] - shift);
  return sum;
}

void ToBf16(const float* x, int64_t n, uint16_t* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = F32ToBf16(x[i]);
}

}  // namespace

ElementwiseKernels ScalarElementwiseKernels() {
  return {RmsNormRow, LayerNormRow, RopeHead, GeluTanh, GeluErf, SiluMul,
          Add,        AddMinMax,    MaxOf,    SumExp,   ToBf16};
}

ElementwiseKernels ElementwiseKernelsFor(CpuTier tier) {
#if defined(__x86_64__)
  switch (tier) {
    case CpuTier::kAmx:
    case CpuTier::kAvx512Bf16:
    case CpuTier::kAvx512Vnni:
    case CpuTier::kAvx512:
      return Avx512ElementwiseKernels();
    case CpuTier::kAvxVnni:
    case CpuTier::kAvx2:
      return Avx2ElementwiseKernels();
    default:
      break;
  }
#endif
#if defined(__aarch64__)
  if (tier == CpuTier::kNeon) return NeonElementwiseKernels();
#endif
  (void)tier;
  return ScalarElementwiseKernels();
}

const ElementwiseKernels& ActiveElementwiseKernels() {
  static const ElementwiseKernels k = ElementwiseKernelsFor(ActiveTier());
  return k;
}

}  // namespace qvl::kernels
