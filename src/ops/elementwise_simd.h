// The element-wise kernels written once over a tier's Simd<T> (include after the tier's
// header, from that tier's file only). GELU-tanh is computed as x * sigmoid(2u) (equal
// to 0.5 x (1 + tanh u)) and exact GELU through erfc, so both keep about 1e-7 relative
// error over the whole range, negative tails included.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ops/elementwise_kernels.h"
#include "ops/simd.h"
#include "ops/simd_math.h"

namespace qvl::kernels {
namespace {
namespace elementwise {

template <class T>
float SumSquares(const float* x, int64_t dim) {
  using S = Simd<T>;
  using V = Vec<T>;
  constexpr int kLanes = S::kLanes;
  V a0 = S::Zero(), a1 = S::Zero();
  int64_t i = 0;
  for (; i + 2 * kLanes <= dim; i += 2 * kLanes) {
    const V v0 = S::Load(x + i), v1 = S::Load(x + i + kLanes);
    a0 = S::MulAdd(v0, v0, a0);
    a1 = S::MulAdd(v1, v1, a1);
  }
  for (; i < dim; i += kLanes) {
    const V v = S::Load(x + i, dim - i);
    a0 = S::MulAdd(v, v, a0);
  }
  return S::ReduceAdd(S::Add(a0, a1));
}

template <class T>
void RmsNormRow(const float* x, const float* w, int64_t dim, float eps, float* y) {
  using S = Simd<T>;
  using V = Vec<T>;
  const V iv = S::Set(1.0f / std::sqrt(SumSquares<T>(x, dim) / static_cast<float>(dim) + eps));
  for (int64_t i = 0; i < dim; i += S::kLanes) {
    S::Store(y + i, dim - i, S::Mul(S::Load(w + i, dim - i), S::Mul(S::Load(x + i, dim - i), iv)));
  }
}

template <class T>
void LayerNormRow(const float* x, const float* w, const float* b, int64_t dim, float eps,
                  float* y) {
  using S = Simd<T>;
  using V = Vec<T>;
  V s = S::Zero();
  for (int64_t i = 0; i < dim; i += S::kLanes) s = S::Add(s, S::Load(x + i, dim - i));
  const V mv = S::Set(S::ReduceAdd(s) / static_cast<float>(dim));
  V var = S::Zero();
  for (int64_t i = 0; i < dim; i += S::kLanes) {
    const V c = S::KeepFirst(S::Sub(S::Load(x + i, dim - i), mv), dim - i);
    var = S::MulAdd(c, c, var);
  }
  const V iv = S::Set(1.0f / std::sqrt(S::ReduceAdd(var) / static_cast<float>(dim) + eps));
  for (int64_t i = 0; i < dim; i += S::kLanes) {
    const int64_t left = dim - i;
    const V c = S::Mul(S::Sub(S::Load(x + i, left), mv), iv);
    S::Store(y + i, left, S::MulAdd(c, S::Load(w + i, left), S::Load(b + i, left)));
  }
}

template <class T>
void RopeHead(float* x, int half, const float* cos, const float* sin, const float* w, float eps) {
  using S = Simd<T>;
  using V = Vec<T>;
  V inv = S::Set(1.0f);
  if (w != nullptr) {
    const int64_t d = 2 * int64_t{half};
    inv = S::Set(1.0f / std::sqrt(SumSquares<T>(x, d) / static_cast<float>(d) + eps));
  }
  for (int i = 0; i < half; i += S::kLanes) {
    const int left = half - i;
    V a = S::Mul(S::Load(x + i, left), inv);
    V b = S::Mul(S::Load(x + half + i, left), inv);
    if (w != nullptr) {
      a = S::Mul(S::Load(w + i, left), a);
      b = S::Mul(S::Load(w + half + i, left), b);
    }
    const V c = S::Load(cos + i, left), s = S::Load(sin + i, left);
    S::Store(x + i, left, S::MulSub(a, c, S::Mul(b, s)));
    S::Store(x + half + i, left, S::MulAdd(b, c, S::Mul(a, s)));
  }
}

template <class T>
void GeluTanh(float* x, int64_t n) {
  using S = Simd<T>;
  using V = Vec<T>;
  const V k2 = S::Set(2.0f * 0.7978845608028654f);
  const V c = S::Set(0.044715f);
  for (int64_t i = 0; i < n; i += S::kLanes) {
    const V v = S::Load(x + i, n - i);
    const V v3 = S::Mul(S::Mul(v, v), v);
    const V u2 = S::Mul(k2, S::MulAdd(c, v3, v));
    S::Store(x + i, n - i, S::Mul(v, simd::Sigmoid<T>(u2)));
  }
}

template <class T>
void GeluErf(float* x, int64_t n) {
  using S = Simd<T>;
  using V = Vec<T>;
  const V inv_sqrt2 = S::Set(0.7071067811865476f);
  const V half = S::Set(0.5f);
  const V two = S::Set(2.0f);
  for (int64_t i = 0; i < n; i += S::kLanes) {
    const V v = S::Load(x + i, n - i);
    const V e = simd::ErfcNonNegative<T>(S::Mul(S::Abs(v), inv_sqrt2));
    // 1 + erf(v / sqrt 2) = 2 - erfc(z) for v >= 0, erfc(z) for v < 0.
    const V f = S::IfNegative(v, e, S::Sub(two, e));
    S::Store(x + i, n - i, S::Mul(S::Mul(half, v), f));
  }
}

template <class T>
void SiluMul(const float* gate, const float* up, int64_t n, float* out) {
  using S = Simd<T>;
  using V = Vec<T>;
  for (int64_t i = 0; i < n; i += S::kLanes) {
    const V g = S::Load(gate + i, n - i);
    const V u = S::Load(up + i, n - i);
    S::Store(out + i, n - i, S::Mul(S::Mul(g, simd::Sigmoid<T>(g)), u));
  }
}

template <class T>
void Add(float* y, const float* x, int64_t n) {
  using S = Simd<T>;
  for (int64_t i = 0; i < n; i += S::kLanes) {
    S::Store(y + i, n - i, S::Add(S::Load(y + i, n - i), S::Load(x + i, n - i)));
  }
}

// Min(x, lo) and Max(x, hi) return their second operand where x is NaN, as the scalar
// twin's compares do.
template <class T>
void AddMinMax(const float* x, int64_t n, float* sum, float* lo, float* hi) {
  using S = Simd<T>;
  using V = Vec<T>;
  for (int64_t i = 0; i < n; i += S::kLanes) {
    const V v = S::Load(x + i, n - i);
    S::Store(sum + i, n - i, S::Add(S::Load(sum + i, n - i), v));
    S::Store(lo + i, n - i, S::Min(v, S::Load(lo + i, n - i)));
    S::Store(hi + i, n - i, S::Max(v, S::Load(hi + i, n - i)));
  }
}

template <class T>
float MaxOf(const float* x, int64_t n) {
  using S = Simd<T>;
  using V = Vec<T>;
  V m = S::Set(x[0]);
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) m = S::Max(S::Load(x + i), m);
  float lanes[S::kLanes];
  S::Store(lanes, S::kLanes, m);
  float out = lanes[0];
  for (float l : lanes) out = l > out ? l : out;
  for (; i < n; ++i) out = x[i] > out ? x[i] : out;
  return out;
}

template <class T>
float SumExp(const float* x, int64_t n, float shift) {
  using S = Simd<T>;
  using V = Vec<T>;
  constexpr int kLanes = S::kLanes;
  const V sv = S::Set(shift);
  V a0 = S::Zero(), a1 = S::Zero();
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    a0 = S::Add(a0, simd::Exp<T>(S::Sub(S::Load(x + i), sv)));
    a1 = S::Add(a1, simd::Exp<T>(S::Sub(S::Load(x + i + kLanes), sv)));
  }
  for (; i < n; i += kLanes) {
    const V e = simd::Exp<T>(S::Sub(S::Load(x + i, n - i), sv));
    a0 = S::Add(a0, S::KeepFirst(e, n - i));
  }
  return S::ReduceAdd(S::Add(a0, a1));
}

// F32ToBf16 without its branch, so the compiler vectorizes it for the tier's ISA.
inline void ToBf16(const float* x, int64_t n, uint16_t* y) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, 4);
    const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
    const uint32_t quiet_nan = (bits >> 16) | 0x40u;
    y[i] = static_cast<uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
  }
}

}  // namespace elementwise

template <class T>
ElementwiseKernels ElementwiseKernelsOf() {
  using namespace elementwise;
  return {RmsNormRow<T>, LayerNormRow<T>, RopeHead<T>, GeluTanh<T>, GeluErf<T>, SiluMul<T>,
          Add<T>,        AddMinMax<T>,    MaxOf<T>,    SumExp<T>,   ToBf16};
}

}  // namespace
}  // namespace qvl::kernels
