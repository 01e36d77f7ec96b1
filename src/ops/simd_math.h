// Vector exp, exp2, sigmoid and erfc over any tier's Simd<T> (include after the tier's
// header). Relative error about 1e-7 (exp, exp2, sigmoid) and 2e-7 (erfc), against
// 6e-8 for float rounding; below the tier's kExpLow / kExp2Low results round to 0.
#pragma once

#include "ops/simd.h"

namespace qvl::kernels {
namespace {
namespace simd {

// e^r for |r| <= ln(2)/2 (Cephes expf polynomial).
template <class T>
Vec<T> ExpReduced(Vec<T> r) {
  using S = Simd<T>;
  using V = Vec<T>;
  V p = S::Set(1.9875691500e-4f);
  p = S::MulAdd(p, r, S::Set(1.3981999507e-3f));
  p = S::MulAdd(p, r, S::Set(8.3334519073e-3f));
  p = S::MulAdd(p, r, S::Set(4.1665795894e-2f));
  p = S::MulAdd(p, r, S::Set(1.6666665459e-1f));
  p = S::MulAdd(p, r, S::Set(5.0000001201e-1f));
  const V r2 = S::Mul(r, r);
  return S::Add(S::MulAdd(p, r2, r), S::Set(1.0f));
}

// e^x; saturates to +inf above kExpHigh.
template <class T>
Vec<T> Exp(Vec<T> x) {
  using S = Simd<T>;
  using V = Vec<T>;
  x = S::Max(S::Min(x, S::Set(S::kExpHigh)), S::Set(S::kExpLow));
  const V n = S::Round(S::Mul(x, S::Set(1.44269504088896341f)));
  V r = S::NegMulAdd(n, S::Set(0.693359375f), x);
  r = S::NegMulAdd(n, S::Set(-2.12194440e-4f), r);
  return S::Scale2(ExpReduced<T>(r), n);
}

// x <= 0 as n + f, n integral and |f| <= 1/2; x is first raised to the tier's kExp2Low,
// below which 2^x rounds to 0. Returns f.
template <class T>
Vec<T> SplitExp2(Vec<T> x, Vec<T>& n) {
  using S = Simd<T>;
  x = S::Max(x, S::Set(S::kExp2Low));
  n = S::Round(x);
  return S::Sub(x, n);
}

// 2^x for x <= 0 (softmax in base 2).
template <class T>
Vec<T> Exp2NonPositive(Vec<T> x) {
  using S = Simd<T>;
  using V = Vec<T>;
  V n;
  const V r = S::Mul(SplitExp2<T>(x, n), S::Set(0.693147180559945309f));
  return S::Scale2(ExpReduced<T>(r), n);
}

// 255 * 2^x for x <= 0: the int8 softmax's probability codes before rounding. 2^frac from
// a cubic (relative error 7.5e-5, a fiftieth of a code at 255), enough where the result
// is rounded to an integer; the integer part by Scale2.
template <class T>
Vec<T> Exp2NonPositiveTimes255(Vec<T> x) {
  using S = Simd<T>;
  using V = Vec<T>;
  V n;
  const V f = SplitExp2<T>(x, n);
  V p = S::Set(255.0f * 0.0551716691f);
  p = S::MulAdd(p, f, S::Set(255.0f * 0.242611122f));
  p = S::MulAdd(p, f, S::Set(255.0f * 0.693260985f));
  p = S::MulAdd(p, f, S::Set(255.0f * 0.999928074f));
  return S::Scale2(p, n);
}

// 1 / (1 + e^-x).
template <class T>
Vec<T> Sigmoid(Vec<T> x) {
  using S = Simd<T>;
  using V = Vec<T>;
  const V e = Exp<T>(S::Sub(S::Zero(), x));
  return S::Div(S::Set(1.0f), S::Add(S::Set(1.0f), e));
}

// erfc(z) for z >= 0 with relative error below 2e-7 (Chebyshev fit of
// erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2)).
template <class T>
Vec<T> ErfcNonNegative(Vec<T> z) {
  using S = Simd<T>;
  using V = Vec<T>;
  const V t = S::Div(S::Set(1.0f), S::MulAdd(z, S::Set(0.5f), S::Set(1.0f)));
  V p = S::Set(0.17087277f);
  p = S::MulAdd(p, t, S::Set(-0.82215223f));
  p = S::MulAdd(p, t, S::Set(1.48851587f));
  p = S::MulAdd(p, t, S::Set(-1.13520398f));
  p = S::MulAdd(p, t, S::Set(0.27886807f));
  p = S::MulAdd(p, t, S::Set(-0.18628806f));
  p = S::MulAdd(p, t, S::Set(0.09678418f));
  p = S::MulAdd(p, t, S::Set(0.37409196f));
  p = S::MulAdd(p, t, S::Set(1.00002368f));
  p = S::MulAdd(p, t, S::Set(-1.26551223f));
  p = S::NegMulAdd(z, z, p);
  return S::Mul(t, Exp<T>(p));
}

}  // namespace simd
}  // namespace
}  // namespace qvl::kernels
