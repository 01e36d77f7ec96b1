// Every compiled element-wise tier against its scalar twin on odd sizes, and the
// pool-split entry points against single-threaded calls.
#include "ops/elementwise_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ops/activation.h"
#include "ops/norm.h"
#include "ops/rope.h"

namespace qvl::kernels {
namespace {

std::vector<CpuTier> SimdTiers() {
  std::vector<CpuTier> tiers;
#if defined(__x86_64__)
  for (CpuTier t : {CpuTier::kAvx2, CpuTier::kAvxVnni, CpuTier::kAvx512})
    if (TierSupported(t)) tiers.push_back(t);
#endif
#if defined(__aarch64__)
  if (TierSupported(CpuTier::kNeon)) tiers.push_back(CpuTier::kNeon);
#endif
  return tiers;
}

std::vector<float> Normal(size_t n, std::mt19937& rng, float mean = 0.0f, float sd = 1.0f) {
  std::normal_distribution<float> dist(mean, sd);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// |got - want| <= rel * |want| + abs (+ abs_per_input * |input[i]| when given).
void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, float rel,
                 float abs, const std::string& what, const std::vector<float>* input = nullptr,
                 float abs_per_input = 0.0f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const float tol = rel * std::fabs(want[i]) + abs +
                      (input != nullptr ? abs_per_input * std::fabs((*input)[i]) : 0.0f);
    ASSERT_NEAR(got[i], want[i], tol) << what << " at " << i;
  }
}

const int64_t kSizes[] = {1, 7, 15, 16, 17, 33, 100, 1023};

TEST(ElementwiseKernels, NormsMatchScalarTwin) {
  const ElementwiseKernels ref = ScalarElementwiseKernels();
  std::mt19937 rng(3);
  for (CpuTier tier : SimdTiers()) {
    const ElementwiseKernels k = ElementwiseKernelsFor(tier);
    for (int64_t n : kSizes) {
      const std::string name = std::string(CpuTierName(tier)) + " n=" + std::to_string(n);
      const auto x = Normal(n, rng, 0.5f, 2.0f), w = Normal(n, rng), b = Normal(n, rng);
      std::vector<float> want(n), got(n);
      ref.rms_norm_row(x.data(), w.data(), n, 1e-6f, want.data());
      k.rms_norm_row(x.data(), w.data(), n, 1e-6f, got.data());
      ExpectClose(got, want, 1e-5f, 1e-6f, name + " rms");
      ref.layer_norm_row(x.data(), w.data(), b.data(), n, 1e-6f, want.data());
      k.layer_norm_row(x.data(), w.data(), b.data(), n, 1e-6f, got.data());
      ExpectClose(got, want, 1e-5f, 1e-5f, name + " layer");
    }
  }
}

// Rounding ties both ways, denormals, infinities and NaNs (quiet and signalling).
TEST(ElementwiseKernels, ToBf16IsTheScalarRoundingBitForBit) {
  const ElementwiseKernels ref = ScalarElementwiseKernels();
  std::mt19937 rng(9);
  std::vector<float> x = Normal(1000, rng, 0.0f, 3.0f);
  for (uint32_t bits :
       {0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0x00000001u, 0x807fffffu, 0x7f800000u, 0xff800000u,
        0x7fc00000u, 0x7f800001u, 0xffbfffffu, 0x7f7fffffu, 0x00000000u, 0x80000000u}) {
    float f;
    std::memcpy(&f, &bits, 4);
    x.push_back(f);
  }
  for (CpuTier tier : SimdTiers()) {
    const ElementwiseKernels k = ElementwiseKernelsFor(tier);
    for (int64_t n : {int64_t{1}, int64_t{17}, static_cast<int64_t>(x.size())}) {
      std::vector<uint16_t> want(n), got(n);
      ref.to_bf16(x.data() + x.size() - n, n, want.data());
      k.to_bf16(x.data() + x.size() - n, n, got.data());
      EXPECT_EQ(got, want) << CpuTierName(tier) << " n=" << n;
    }
  }
  EXPECT_EQ(std::vector<uint16_t>({0x3f80, 0x3f82}), [&] {
    std::vector<uint16_t> y(2);
    ref.to_bf16(x.data() + 1000, 2, y.data());  // ties round to even: down, then up
    return y;
  }());
}

TEST(ElementwiseKernels, RopeAndFusedNormRopeMatchScalarTwin) {
  const ElementwiseKernels ref = ScalarElementwiseKernels();
  std::mt19937 rng(4);
  for (CpuTier tier : SimdTiers()) {
    const ElementwiseKernels k = ElementwiseKernelsFor(tier);
    for (int half : {1, 3, 8, 17, 32, 64}) {
      const std::string name = std::string(CpuTierName(tier)) + " half=" + std::to_string(half);
      const auto x = Normal(2 * half, rng), w = Normal(2 * half, rng);
      const auto c = Normal(half, rng), s = Normal(half, rng);
      for (const float* weights : {static_cast<const float*>(nullptr), w.data()}) {
        std::vector<float> want = x, got = x;
        ref.rope_head(want.data(), half, c.data(), s.data(), weights, 1e-6f);
        k.rope_head(got.data(), half, c.data(), s.data(), weights, 1e-6f);
        ExpectClose(got, want, 1e-5f, 1e-6f, name + (weights ? " norm+rope" : " rope"));
      }
    }
  }
}

TEST(ElementwiseKernels, ActivationsMatchScalarTwinToRelative1e6) {
  const ElementwiseKernels ref = ScalarElementwiseKernels();
  std::mt19937 rng(5);
  for (CpuTier tier : SimdTiers()) {
    const ElementwiseKernels k = ElementwiseKernelsFor(tier);
    for (int64_t n : kSizes) {
      const std::string name = std::string(CpuTierName(tier)) + " n=" + std::to_string(n);
      // Wide inputs reach the tails (GELU of -9 is about -1e-18). There the float
      // rounding of the exponent's argument alone moves the result by a few 1e-6 of
      // itself in any implementation, hence the small allowance in units of |x|.
      const auto x = Normal(n, rng, 0.0f, 4.0f), u = Normal(n, rng);
      std::vector<float> want = x, got = x;
      ref.gelu_tanh(want.data(), n);
      k.gelu_tanh(got.data(), n);
      ExpectClose(got, want, 2e-6f, 0.0f, name + " gelu_tanh", &x, 1e-9f);
      want = got = x;
      ref.gelu_erf(want.data(), n);
      k.gelu_erf(got.data(), n);
      ExpectClose(got, want, 2e-6f, 0.0f, name + " gelu_erf", &x, 1e-9f);
      ref.silu_mul(x.data(), u.data(), n, want.data());
      k.silu_mul(x.data(), u.data(), n, got.data());
      ExpectClose(got, want, 2e-6f, 0.0f, name + " silu_mul", &x, 1e-9f);
      want = got = x;
      ref.add(want.data(), u.data(), n);
      k.add(got.data(), u.data(), n);
      ExpectClose(got, want, 0.0f, 0.0f, name + " add");
      // Column statistics over three rows, one with a NaN that min and max skip.
      std::vector<float> sum(n, 0.5f), lo = x, hi = x, sum2 = sum, lo2 = lo, hi2 = hi;
      const std::vector<float> nan_row = [&] {
        std::vector<float> r = u;
        r[n / 2] = std::nanf("");
        return r;
      }();
      for (const std::vector<float>* row : {&u, &x, &nan_row}) {
        ref.add_min_max(row->data(), n, sum.data(), lo.data(), hi.data());
        k.add_min_max(row->data(), n, sum2.data(), lo2.data(), hi2.data());
      }
      EXPECT_FALSE(std::isnan(lo[n / 2]) || std::isnan(hi[n / 2])) << name;
      ExpectClose(lo2, lo, 0.0f, 0.0f, name + " add_min_max lo");
      ExpectClose(hi2, hi, 0.0f, 0.0f, name + " add_min_max hi");
      ASSERT_TRUE(std::isnan(sum2[n / 2])) << name;
      sum[n / 2] = sum2[n / 2] = 0.0f;
      ExpectClose(sum2, sum, 0.0f, 0.0f, name + " add_min_max sum");
    }
  }
}

// A row of logits' largest value and the sum of their exponentials below it, as the
// logprobs over a vocabulary take them (the largest last, first, or anywhere).
TEST(ElementwiseKernels, MaxAndSumExpMatchScalarTwin) {
  const ElementwiseKernels ref = ScalarElementwiseKernels();
  std::mt19937 rng(7);
  for (CpuTier tier : SimdTiers()) {
    const ElementwiseKernels k = ElementwiseKernelsFor(tier);
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{33}, int64_t{1000}, int64_t{151936}}) {
      const std::string name = std::string(CpuTierName(tier)) + " n=" + std::to_string(n);
      std::vector<float> x = Normal(static_cast<size_t>(n), rng, -3.0f, 4.0f);
      for (const int64_t at : {n - 1, int64_t{0}, n / 2}) {
        x[static_cast<size_t>(at)] = 30.0f + static_cast<float>(at % 5);
        const float largest = ref.max_of(x.data(), n);
        EXPECT_EQ(largest, x[static_cast<size_t>(at)]) << name;
        EXPECT_EQ(k.max_of(x.data(), n), largest) << name;
        const float want = ref.sum_exp(x.data(), n, largest);
        EXPECT_NEAR(k.sum_exp(x.data(), n, largest), want, 1e-5f * want) << name;
        x[static_cast<size_t>(at)] = 0.0f;
      }
    }
  }
}

TEST(ElementwiseKernels, ExtremeActivationInputsStayFinite) {
  const std::vector<float> x = {-1e30f, -200.0f, -90.0f, -20.0f, 0.0f, -0.0f,
                                1e-30f, 20.0f,   90.0f,  200.0f, 1e30f};
  for (CpuTier tier : SimdTiers()) {
    const ElementwiseKernels k = ElementwiseKernelsFor(tier);
    std::vector<float> g = x, e = x, s(x.size());
    k.gelu_tanh(g.data(), static_cast<int64_t>(g.size()));
    k.gelu_erf(e.data(), static_cast<int64_t>(e.size()));
    k.silu_mul(x.data(), std::vector<float>(x.size(), 1.0f).data(), static_cast<int64_t>(x.size()),
               s.data());
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = x[i] > 0 ? x[i] : 0.0f;  // all three tend to relu
      if (std::fabs(x[i]) >= 20.0f) {
        EXPECT_NEAR(g[i], want, 1e-6f * std::fabs(want) + 1e-6f)
            << CpuTierName(tier) << " " << x[i];
        EXPECT_NEAR(e[i], want, 1e-6f * std::fabs(want) + 1e-6f)
            << CpuTierName(tier) << " " << x[i];
        EXPECT_NEAR(s[i], want, 1e-6f * std::fabs(want) + 1e-6f)
            << CpuTierName(tier) << " " << x[i];
      }
      EXPECT_FALSE(std::isnan(g[i]) || std::isnan(e[i]) || std::isnan(s[i])) << x[i];
    }
  }
}

#if defined(__aarch64__)
// Every 64-bit ARM CPU has NEON: the twin tests above compare its own kernels there.
TEST(ElementwiseKernels, NeonTierHasItsOwnKernels) {
  EXPECT_EQ(SimdTiers(), std::vector<CpuTier>{CpuTier::kNeon});
  EXPECT_NE(ElementwiseKernelsFor(CpuTier::kNeon).gelu_erf, ScalarElementwiseKernels().gelu_erf);
}
#endif

TEST(ElementwiseOps, PoolSplitEqualsSingleThread) {
  std::mt19937 rng(6);
  ThreadPool pool(2, false);
  const int64_t rows = 300, dim = 257;
  const auto x = Normal(rows * dim, rng), w = Normal(dim, rng), b = Normal(dim, rng);
  std::vector<float> one(rows * dim), two(rows * dim);
  RmsNorm(x.data(), w.data(), rows, dim, dim, 1e-6f, one.data());
  RmsNorm(x.data(), w.data(), rows, dim, dim, 1e-6f, two.data(), &pool);
  EXPECT_EQ(one, two);
  LayerNorm(x.data(), w.data(), b.data(), rows, dim, 1e-6f, one.data());
  LayerNorm(x.data(), w.data(), b.data(), rows, dim, 1e-6f, two.data(), &pool);
  EXPECT_EQ(one, two);
  one = two = x;
  GeluTanh(one.data(), rows * dim);
  GeluTanh(two.data(), rows * dim, &pool);
  EXPECT_EQ(one, two);
  // Rope over 3 heads of 64 with per-token tables, split by tokens.
  const auto c = Normal(rows * 32, rng), s = Normal(rows * 32, rng);
  one = two = x;
  RmsNormRope(one.data(), w.data(), 1e-6f, rows, 3, 64, dim, c.data(), s.data());
  RmsNormRope(two.data(), w.data(), 1e-6f, rows, 3, 64, dim, c.data(), s.data(), &pool);
  EXPECT_EQ(one, two);
  EXPECT_EQ(one[rows * dim - 1], x[rows * dim - 1]);  // column 192.. of a row is untouched
}

}  // namespace
}  // namespace qvl::kernels
