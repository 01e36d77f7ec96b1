#include "ops/linear.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/bf16.h"
#include "base/cpu_features.h"
#include "base/error.h"
#include "ops/activation.h"
#include "ops/matmul_kernels.h"
#include "ops/norm.h"
#include "ops/rope.h"

namespace qvl {
namespace {

std::vector<float> RandomVector(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// The precision MatMul accepts for a weight format: f32 weights take the f32 path.
MatmulPrecision PrecisionFor(WeightFormat f) {
  return f == WeightFormat::kF32 ? MatmulPrecision::kF32 : MatmulPrecision::kBF16;
}

std::vector<uint16_t> ToBf16(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = F32ToBf16(v[i]);
  return out;
}

// y = x W^T + b in double, the ground truth for every kernel.
std::vector<float> Reference(const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& b, int64_t m, int64_t n, int64_t k) {
  std::vector<float> y(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = b.empty() ? 0.0 : b[j];
      for (int64_t p = 0; p < k; ++p) s += static_cast<double>(x[i * k + p]) * w[j * k + p];
      y[i * n + j] = static_cast<float>(s);
    }
  return y;
}

struct Shape {
  int64_t m, n, k;
};
const Shape kShapes[] = {{1, 1, 1},   {1, 7, 13},   {3, 5, 31},    {4, 2, 16},  {5, 9, 33},
                         {8, 64, 64}, {17, 3, 100}, {2, 130, 257}, {65, 33, 48}};

TEST(MatMulKernels, EveryTierMatchesReference) {
  std::mt19937 rng(7);
  for (CpuTier tier : SupportedTiers()) {
    const kernels::MatMulKernels kern = kernels::MatMulKernelsFor(tier);
    for (const Shape& s : kShapes) {
      const auto x = RandomVector(s.m * s.k, rng);
      const auto w = RandomVector(s.n * s.k, rng);
      const auto b = RandomVector(s.n, rng);
      const auto wb = ToBf16(w);
      const auto xb = ToBf16(x);
      std::vector<float> w_dec(wb.size()), x_dec(xb.size());
      for (size_t i = 0; i < wb.size(); ++i) w_dec[i] = Bf16ToF32(wb[i]);
      for (size_t i = 0; i < xb.size(); ++i) x_dec[i] = Bf16ToF32(xb[i]);
      const float tol = 1e-4f * std::sqrt(static_cast<float>(s.k)) + 1e-5f;

      std::vector<float> y(s.m * s.n);
      kern.f32(x.data(), s.k, s.m, w.data(), s.k, s.n, s.k, b.data(), y.data(), s.n);
      auto want = Reference(x, w, b, s.m, s.n, s.k);
      for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], tol) << CpuTierName(tier);

      kern.bf16w(x.data(), s.k, s.m, wb.data(), s.k, s.n, s.k, nullptr, y.data(), s.n);
      want = Reference(x, w_dec, {}, s.m, s.n, s.k);
      for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], tol) << CpuTierName(tier);

      kern.bf16(xb.data(), s.k, s.m, wb.data(), s.k, s.n, s.k, b.data(), y.data(), s.n);
      want = Reference(x_dec, w_dec, b, s.m, s.n, s.k);
      for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], tol) << CpuTierName(tier);
    }
  }
}

#if defined(__aarch64__)
// Every 64-bit ARM CPU has NEON: the test above compares its own tiles there.
TEST(MatMulKernels, NeonTierHasItsOwnKernels) {
  EXPECT_TRUE(TierSupported(CpuTier::kNeon));
  EXPECT_NE(kernels::MatMulKernelsFor(CpuTier::kNeon).f32, kernels::ScalarMatMulKernels().f32);
}
#endif

TEST(MatMul, ThreadedMatchesReferenceInBothPrecisions) {
  std::mt19937 rng(3);
  ThreadPool pool(3, /*pin=*/false);
  const int64_t m = 37, n = 203, k = 96;
  const auto x = RandomVector(m * k, rng);
  const auto w = RandomVector(n * k, rng);
  const auto b = RandomVector(n, rng);
  const auto wb = ToBf16(w);
  std::vector<float> w_dec(wb.size());
  for (size_t i = 0; i < wb.size(); ++i) w_dec[i] = Bf16ToF32(wb[i]);

  const LinearWeight lw =
      LinearWeight::Prepare({DType::kBF16, n, k, wb.data()}, WeightFormat::kBF16);
  EXPECT_EQ(lw.data(), wb.data());  // used in place
  EXPECT_EQ(lw.owned_bytes(), 0u);
  std::vector<float> y(m * n);
  MatMul(x.data(), m, lw, b.data(), y.data(), MatmulPrecision::kF32, pool);
  auto want = Reference(x, w_dec, b, m, n, k);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-3f);

  MatMul(x.data(), m, lw, b.data(), y.data(), MatmulPrecision::kBF16, pool);
  std::vector<float> x_dec(x.size());
  for (size_t i = 0; i < x.size(); ++i) x_dec[i] = Bf16ToF32(F32ToBf16(x[i]));
  want = Reference(x_dec, w_dec, b, m, n, k);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-3f);

  const LinearWeight lf =
      LinearWeight::Prepare({DType::kBF16, n, k, wb.data()}, WeightFormat::kF32);
  EXPECT_EQ(lf.owned_bytes(), static_cast<size_t>(n * k * 4));
  MatMul(x.data(), m, lf, nullptr, y.data(), MatmulPrecision::kF32, pool);
  want = Reference(x, w_dec, {}, m, n, k);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-3f);
}

// An fp8 checkpoint's weight (codes and a scale per 64 x 40 block, the last ones partial)
// prepares in every format exactly as the F32 matrix of its decoded values does, threaded
// or not.
TEST(LinearWeight, Fp8WeightsPrepareAsTheirDecodedValues) {
  std::mt19937 rng(11);
  ThreadPool pool(3, /*pin=*/false);
  const int64_t n = 203, k = 96, br = 64, bc = 40;
  std::vector<uint8_t> codes(n * k);
  for (uint8_t& c : codes) {
    c = static_cast<uint8_t>(rng() & 0xff);
    if ((c & 0x7f) == 0x7f) c = 0x3f;  // no NaN codes
  }
  const int64_t scale_cols = (k + bc - 1) / bc;
  std::vector<float> scales(((n + br - 1) / br) * scale_cols);
  for (float& s : scales) s = std::ldexp(1.0f + static_cast<float>(rng() % 100) / 100, -9);
  std::vector<float> decoded(n * k);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < k; ++c) {
      decoded[r * k + c] = F8E4M3ToF32(codes[r * k + c]) * scales[(r / br) * scale_cols + c / bc];
    }
  }
  WeightView fp8{DType::kF8E4M3, n, k, codes.data()};
  fp8.block_scales = scales.data();
  fp8.block_rows = br;
  fp8.block_cols = bc;
  const WeightView f32{DType::kF32, n, k, decoded.data()};
  for (WeightFormat format : {WeightFormat::kF32, WeightFormat::kBF16, WeightFormat::kQ8,
                              WeightFormat::kQ4, WeightFormat::kW8A8, WeightFormat::kBF16Packed}) {
    SCOPED_TRACE(WeightFormatName(format));
    const LinearWeight want = LinearWeight::Prepare(f32, format, &pool);
    for (ThreadPool* p : {&pool, static_cast<ThreadPool*>(nullptr)}) {
      const LinearWeight got = LinearWeight::Prepare(fp8, format, p);
      ASSERT_EQ(got.bytes(), want.bytes());
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.bytes()), 0);
    }
  }
}

// MatMulAdd is MatMul followed by the residual add, bit for bit, in every weight format
// (packed formats add in the kernels' stores, row-major ones after the product).
TEST(MatMul, MatMulAddIsMatMulThenAdd) {
  std::mt19937 rng(5);
  ThreadPool pool(2, /*pin=*/false);
  for (const int64_t m : {1, 3, 37}) {
    const int64_t n = 70, k = 96;
    const auto x = RandomVector(m * k, rng);
    const auto wb = ToBf16(RandomVector(n * k, rng));
    const auto b = RandomVector(n, rng);
    const auto base = RandomVector(m * n, rng);
    for (WeightFormat f : {WeightFormat::kF32, WeightFormat::kBF16, WeightFormat::kBF16Packed,
                           WeightFormat::kQ8, WeightFormat::kQ4, WeightFormat::kW8A8}) {
      SCOPED_TRACE(StrCat(WeightFormatName(f), " m=", m));
      const LinearWeight lw = LinearWeight::Prepare({DType::kBF16, n, k, wb.data()}, f);
      const MatmulPrecision precision = PrecisionFor(f);
      std::vector<float> product(m * n), y = base;
      MatMul(x.data(), m, lw, b.data(), product.data(), precision, pool);
      MatMulAdd(x.data(), m, lw, b.data(), y.data(), precision, pool);
      for (size_t i = 0; i < y.size(); ++i) {
        const float want = base[i] + product[i];
        ASSERT_EQ(0, std::memcmp(&y[i], &want, 4)) << i;
      }
    }
  }
}

// MatMuls (several weights on one x: q, k and v; gate and up) is the separate MatMuls, bit
// for bit, in every format: fused where the weights are packed alike (many rows as in
// prefill, few as in decode), one by one where formats or depths differ.
TEST(MatMul, MatMulsAreTheSeparateMatMuls) {
  std::mt19937 rng(6);
  ThreadPool pool(2, /*pin=*/false);
  const int64_t k = 160;
  const int64_t ns[] = {70, 16, 300};
  std::vector<std::vector<uint16_t>> wb;
  for (const int64_t n : ns) wb.push_back(ToBf16(RandomVector(n * k, rng)));
  const auto bias = RandomVector(ns[0], rng);
  for (const int64_t m : {1, 5, 200}) {
    const auto x = RandomVector(m * k, rng);
    for (WeightFormat f : {WeightFormat::kF32, WeightFormat::kBF16Packed, WeightFormat::kQ8,
                           WeightFormat::kQ4, WeightFormat::kW8A8}) {
      SCOPED_TRACE(StrCat(WeightFormatName(f), " m=", m));
      const MatmulPrecision precision = PrecisionFor(f);
      // The last weight in another format when f is packed: that call is not fused.
      for (const bool mixed : {false, true}) {
        std::vector<LinearWeight> w;
        for (size_t o = 0; o < 3; ++o) {
          const WeightFormat fo = mixed && o == 2 && f != WeightFormat::kQ8 ? WeightFormat::kQ8
                                  : mixed && o == 2                         ? WeightFormat::kW8A8
                                                                            : f;
          w.push_back(LinearWeight::Prepare({DType::kBF16, ns[o], k, wb[o].data()}, fo));
        }
        std::vector<std::vector<float>> want(3), got(3);
        std::vector<MatMulOutput> outs;
        for (size_t o = 0; o < 3; ++o) {
          want[o].resize(m * ns[o]);
          got[o].assign(m * ns[o], -1.0f);
          const float* b = o == 0 ? bias.data() : nullptr;
          MatMul(x.data(), m, w[o], b, want[o].data(), precision, pool);
          outs.push_back({&w[o], b, got[o].data()});
        }
        MatMuls(x.data(), m, outs, precision, pool);
        for (size_t o = 0; o < 3; ++o) {
          ASSERT_EQ(0, std::memcmp(got[o].data(), want[o].data(), want[o].size() * 4))
              << "output " << o << (mixed ? " (mixed formats)" : "");
        }
      }
    }
  }
}

// Calls check(w, bias, precision) for an [n, k] weight in every format, with the bias and
// without.
template <typename Check>
void ForEveryFormatAndBias(const std::vector<uint16_t>& wb, int64_t n, int64_t k,
                           const std::vector<float>& bias, const Check& check) {
  for (WeightFormat f : {WeightFormat::kF32, WeightFormat::kBF16, WeightFormat::kBF16Packed,
                         WeightFormat::kQ8, WeightFormat::kQ4, WeightFormat::kW8A8}) {
    const LinearWeight w = LinearWeight::Prepare({DType::kBF16, n, k, wb.data()}, f);
    for (const float* b : {bias.data(), static_cast<const float*>(nullptr)}) {
      SCOPED_TRACE(StrCat(WeightFormatName(f), b ? " bias" : ""));
      check(w, b, PrecisionFor(f));
    }
  }
}

// The SwiGLU product formed row by row as the matmul converts its input is the separate
// SiluMul bit for bit: every format, one row, a few, and rows over several conversion
// chunks, with and without bias, added to y.
TEST(MatMul, MatMulAddSwiGluIsSiluMulThenMatMulAdd) {
  std::mt19937 rng(8);
  ThreadPool pool(2, /*pin=*/false);
  const int64_t k = 160, n = 72;
  const auto wb = ToBf16(RandomVector(n * k, rng));
  const auto bias = RandomVector(n, rng);
  for (const int64_t m : {1, 5, 300}) {
    SCOPED_TRACE(StrCat("m=", m));
    const auto gate = RandomVector(m * k, rng), up = RandomVector(m * k, rng);
    const auto y0 = RandomVector(m * n, rng);
    ForEveryFormatAndBias(
        wb, n, k, bias, [&](const LinearWeight& w, const float* b, MatmulPrecision precision) {
          std::vector<float> product(m * k), want = y0, got = y0;
          SiluMul(gate.data(), up.data(), m * k, product.data(), &pool);
          MatMulAdd(product.data(), m, w, b, want.data(), precision, pool);
          MatMulAddSwiGlu(gate.data(), up.data(), m, w, b, got.data(), precision, pool);
          ASSERT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * 4));
        });
  }
}

// GELU on each task's rows as they are stored is the separate pass bit for bit: every
// format, one row, a few, and rows over several row chunks and tasks (with a ragged end),
// with and without bias.
TEST(MatMul, MatMulGeluTanhIsMatMulThenGeluTanh) {
  std::mt19937 rng(7);
  ThreadPool pool(2, /*pin=*/false);
  const int64_t k = 96, n = 200;
  const auto wb = ToBf16(RandomVector(n * k, rng));
  const auto bias = RandomVector(n, rng);
  for (const int64_t m : {1, 5, 333}) {
    SCOPED_TRACE(StrCat("m=", m));
    const auto x = RandomVector(m * k, rng);
    ForEveryFormatAndBias(wb, n, k, bias,
                          [&](const LinearWeight& w, const float* b, MatmulPrecision precision) {
                            std::vector<float> want(m * n), got(m * n, -1.0f);
                            MatMul(x.data(), m, w, b, want.data(), precision, pool);
                            GeluTanh(want.data(), m * n, &pool);
                            MatMulGeluTanh(x.data(), m, w, b, got.data(), precision, pool);
                            ASSERT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * 4));
                          });
  }
}

// The rotation of each task's heads as they are stored is the separate ApplyRope bit for
// bit: every format, one row, a few, and rows over several row chunks and tasks, heads of
// 16 and 64 columns (a task's panels rounded to whole heads) and of 24 (not a whole
// number of panels: the separate pass), the rotated heads ending before the last column.
TEST(MatMul, MatMulRopeIsMatMulThenApplyRope) {
  std::mt19937 rng(10);
  ThreadPool pool(2, /*pin=*/false);
  const int64_t k = 96, n = 432;
  const auto wb = ToBf16(RandomVector(n * k, rng));
  const auto bias = RandomVector(n, rng);
  for (const int64_t m : {1, 5, 333}) {
    const auto x = RandomVector(m * k, rng);
    for (const int head_dim : {16, 24, 64}) {
      SCOPED_TRACE(StrCat("m=", m, " head_dim=", head_dim));
      const auto cos = RandomVector(m * head_dim / 2, rng),
                 sin = RandomVector(m * head_dim / 2, rng);
      const OutputRope rope{cos.data(), sin.data(), static_cast<int>(n / head_dim) - 2, head_dim};
      ForEveryFormatAndBias(
          wb, n, k, bias, [&](const LinearWeight& w, const float* b, MatmulPrecision precision) {
            std::vector<float> want(m * n), got(m * n, -1.0f);
            MatMul(x.data(), m, w, b, want.data(), precision, pool);
            ApplyRope(want.data(), m, rope.heads, head_dim, n, cos.data(), sin.data(), &pool);
            MatMulRope(x.data(), m, w, b, got.data(), rope, precision, pool);
            ASSERT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * 4));
          });
    }
  }
}

// A pre-norm applied as the matmul converts each row is the separate norm bit for bit:
// RMSNorm and LayerNorm, every format, one row, a few and many, through MatMul, MatMuls
// (two weights sharing the input) and MatMulGeluTanh.
TEST(MatMul, InputNormIsNormThenMatMul) {
  std::mt19937 rng(9);
  ThreadPool pool(2, /*pin=*/false);
  const int64_t k = 96, n = 80;
  const auto wb = ToBf16(RandomVector(n * k, rng));
  const auto bias = RandomVector(n, rng);
  const auto norm_w = RandomVector(k, rng), norm_b = RandomVector(k, rng);
  for (const float* nb : {static_cast<const float*>(nullptr), norm_b.data()}) {
    const InputNorm norm{norm_w.data(), nb, 1e-6f};
    for (const int64_t m : {1, 5, 300}) {
      SCOPED_TRACE(StrCat(nb ? "LayerNorm" : "RMSNorm", " m=", m));
      auto x = RandomVector(m * k, rng);
      for (float& v : x) v = 3.0f * v + 1.5f;  // an offset and a spread for the norm to remove
      std::vector<float> normed(m * k);
      if (nb != nullptr) {
        LayerNorm(x.data(), norm_w.data(), nb, m, k, norm.eps, normed.data(), &pool);
      } else {
        RmsNorm(x.data(), norm_w.data(), m, k, k, norm.eps, normed.data(), &pool);
      }
      ForEveryFormatAndBias(
          wb, n, k, bias, [&](const LinearWeight& w, const float* b, MatmulPrecision precision) {
            std::vector<float> want(m * n), got(m * n, -1.0f);
            MatMul(normed.data(), m, w, b, want.data(), precision, pool);
            MatMul(x.data(), m, w, b, got.data(), precision, pool, &norm);
            ASSERT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * 4));
            std::vector<float> got2(m * n, -2.0f);
            const MatMulOutput outs[] = {{&w, b, got.data()}, {&w, nullptr, got2.data()}};
            MatMuls(x.data(), m, outs, precision, pool, &norm);
            ASSERT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * 4));
            MatMul(normed.data(), m, w, nullptr, want.data(), precision, pool);
            ASSERT_EQ(0, std::memcmp(got2.data(), want.data(), want.size() * 4));
            MatMulGeluTanh(normed.data(), m, w, b, want.data(), precision, pool);
            MatMulGeluTanh(x.data(), m, w, b, got.data(), precision, pool, &norm);
            ASSERT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * 4));
          });
    }
  }
}

TEST(MatMul, RowsPerWeightReadIsTheActiveKernelsRowTile) {
  EXPECT_EQ(RowsPerWeightRead(WeightFormat::kF32), 1);
  EXPECT_EQ(RowsPerWeightRead(WeightFormat::kBF16), 1);
  for (WeightFormat f :
       {WeightFormat::kBF16Packed, WeightFormat::kQ8, WeightFormat::kQ4, WeightFormat::kW8A8}) {
    SCOPED_TRACE(WeightFormatName(f));
    // AVX2: bf16 tiles of 2 rows, int8 tiles of 4.
    const int64_t expected = ActiveTier() == CpuTier::kScalar ? 1
                             : ActiveTier() == CpuTier::kAvx2
                                 ? (f == WeightFormat::kBF16Packed ? 2 : 4)
                                 : 0;
    if (expected > 0) {
      EXPECT_EQ(RowsPerWeightRead(f), expected);
    }
    EXPECT_GE(RowsPerWeightRead(f), 1);
    EXPECT_LE(RowsPerWeightRead(f), 16);
  }
}

TEST(MatMul, Bf16PrecisionNeedsBf16Weights) {
  ThreadPool pool(1, false);
  std::vector<float> w(4, 1.0f), x(2, 1.0f), y(2);
  const LinearWeight lw = LinearWeight::Prepare({DType::kF32, 2, 2, w.data()}, WeightFormat::kF32);
  EXPECT_THROW(MatMul(x.data(), 1, lw, nullptr, y.data(), MatmulPrecision::kBF16, pool), Error);
}

}  // namespace
}  // namespace qvl
