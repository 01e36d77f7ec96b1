// The SIMD int8 attention kernels (vpmaddwd, vpdpbusd, smull, sdot) against their scalar twins on
// random blocks: odd row counts, partial key blocks, padded head dims. Integer sums must be
// bit-identical; the softmax's float parts (score scaling, exp2) within a rounding step.
#include "ops/attention_int8_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/cpu_features.h"

namespace qvl::kernels {
namespace {

// The SIMD kernels with a scalar twin: each tier's choice, and on ARM both neon sets
// (the ARMv8.0 kernels also where the CPU has dotprod and the tier takes sdot's).
struct SimdTier {
  const char* name;
  bool (*runs)();
  Int8AttentionKernels (*kernels)();
};
void PrintTo(const SimdTier& tier, std::ostream* os) { *os << tier.name; }

template <CpuTier kTier>
SimdTier TierKernels() {
  return {CpuTierName(kTier), [] { return TierSupported(kTier); },
          [] { return Int8AttentionKernelsFor(kTier); }};
}
const SimdTier kSimdTiers[] = {
#if defined(__aarch64__)
    {"neon", [] { return true; }, NeonInt8AttentionKernels},
    {"neon_dotprod", [] { return GetCpuFeatures().arm_dotprod; }, NeonDotProdInt8AttentionKernels},
#else
    TierKernels<CpuTier::kAvx2>(),
    TierKernels<CpuTier::kAvxVnni>(),
    TierKernels<CpuTier::kAvx512>(),
    TierKernels<CpuTier::kAvx512Vnni>(),
#endif
};

std::vector<uint8_t> Bytes(size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> dist(0, 255);
  std::vector<uint8_t> v(n);
  for (uint8_t& x : v) x = static_cast<uint8_t>(dist(rng));
  return v;
}

std::vector<int8_t> Codes(size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> dist(-127, 127);
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = static_cast<int8_t>(dist(rng));
  return v;
}

// Each SIMD kernel set beside the scalar twins; skipped where the CPU lacks its feature.
class Int8KernelTwins : public ::testing::TestWithParam<SimdTier> {
 protected:
  void SetUp() override {
    if (!GetParam().runs()) GTEST_SKIP() << "this CPU does not run " << GetParam().name;
    simd = GetParam().kernels();
  }
  const Int8AttentionKernels ref = ScalarInt8AttentionKernels();
  Int8AttentionKernels simd;
};

INSTANTIATE_TEST_SUITE_P(Tiers, Int8KernelTwins, ::testing::ValuesIn(kSimdTiers),
                         [](const ::testing::TestParamInfo<SimdTier>& info) {
                           return std::string(info.param.name);
                         });

struct Case {
  int rows, n_groups, dp;
};
const Case kCases[] = {{1, 1, 16}, {3, 2, 32},   {5, 3, 48},  {4, 4, 64},  {7, 4, 64}, {32, 4, 64},
                       {9, 1, 80}, {13, 3, 128}, {2, 4, 256}, {6, 2, 208}, {37, 2, 32}};

TEST_P(Int8KernelTwins, QkAndPvSumsAreBitIdentical) {
  std::mt19937 rng(21);
  for (const Case& c : kCases) {
    SCOPED_TRACE("rows=" + std::to_string(c.rows) + " groups=" + std::to_string(c.n_groups) +
                 " dp=" + std::to_string(c.dp));
    const int cols = c.n_groups * kKeyGroup;
    const int64_t ldq = c.dp + 4;  // rows wider than the head, as in the workspace
    const auto q = Bytes(c.rows * ldq, rng);
    const auto k = Codes(c.n_groups * Int8GroupLayout::GroupBytes(c.dp), rng);
    std::vector<int32_t> corr(cols);
    std::uniform_int_distribution<int32_t> corr_dist(-2000000, 2000000);
    for (int32_t& x : corr) x = corr_dist(rng);
    std::vector<int32_t> s_ref(c.rows * cols), s_simd(c.rows * cols, -1);
    ref.qk(q.data(), ldq, c.rows, k.data(), corr.data(), c.n_groups, c.dp, s_ref.data(), cols);
    simd.qk(q.data(), ldq, c.rows, k.data(), corr.data(), c.n_groups, c.dp, s_simd.data(), cols);
    EXPECT_EQ(s_simd, s_ref);

    // alpha 0 and p_scale 1 leave o = the integer sums, exact in float (|sum| < 2^24).
    const int64_t ldp = cols + 8;
    const auto p = Bytes(c.rows * ldp, rng);
    const auto v = Codes(c.n_groups * Int8GroupLayout::GroupBytes(c.dp), rng);
    const std::vector<float> zero(c.rows, 0.0f), one(c.rows, 1.0f);
    std::vector<float> o_ref(c.rows * c.dp, 5.0f), o_simd(c.rows * c.dp, -5.0f);
    ref.pv(p.data(), ldp, c.rows, v.data(), c.n_groups, c.dp, zero.data(), one.data(), o_ref.data(),
           c.dp);
    simd.pv(p.data(), ldp, c.rows, v.data(), c.n_groups, c.dp, zero.data(), one.data(),
            o_simd.data(), c.dp);
    EXPECT_EQ(o_simd, o_ref);

    // The float update around them: o * alpha + p_scale * sum.
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> alpha(c.rows), ps(c.rows), o0(c.rows * c.dp);
    for (int r = 0; r < c.rows; ++r) {
      alpha[r] = std::fabs(normal(rng));
      ps[r] = std::fabs(normal(rng)) * 1e-4f;
    }
    for (float& x : o0) x = normal(rng);
    o_ref = o0;
    o_simd = o0;
    ref.pv(p.data(), ldp, c.rows, v.data(), c.n_groups, c.dp, alpha.data(), ps.data(), o_ref.data(),
           c.dp);
    simd.pv(p.data(), ldp, c.rows, v.data(), c.n_groups, c.dp, alpha.data(), ps.data(),
            o_simd.data(), c.dp);
    for (size_t i = 0; i < o_ref.size(); ++i) {
      ASSERT_NEAR(o_simd[i], o_ref[i], 1e-5f * (1.0f + std::fabs(o_ref[i]))) << "at " << i;
    }
  }
}

TEST_P(Int8KernelTwins, SoftmaxMatchesScalarTwin) {
  std::mt19937 rng(22);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  int64_t codes = 0, off_by_one = 0;
  for (int rows : {1, 4, 7, 33}) {
    for (int n_groups : {1, 2, 3, 4}) {
      const int cols = n_groups * kKeyGroup;
      for (int valid : {cols, cols - 1, cols - 15, 1}) {
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " valid " +
                     std::to_string(valid));
        const int64_t lds = cols + 16, ldp = cols + 8;
        std::vector<int32_t> s(rows * lds);
        std::uniform_int_distribution<int32_t> score(-400000, 400000);
        for (int32_t& x : s) x = score(rng);
        std::vector<float> row_scale(rows), k_scale(cols), m0(rows), l0(rows * kSumLanes);
        for (int r = 0; r < rows; ++r) {
          row_scale[r] = 1e-5f * (1.0f + std::fabs(normal(rng)));
          // Running maxima: none yet, below, near and above the block's scores.
          m0[r] = r % 4 == 0 ? -std::numeric_limits<float>::infinity() : 4.0f * (r % 4 - 2);
        }
        for (float& x : k_scale) x = 0.5f + std::fabs(normal(rng));
        for (float& x : l0) x = std::fabs(normal(rng));
        for (int r = 0; r < rows; r += 4) std::fill_n(l0.begin() + r * kSumLanes, kSumLanes, 0.0f);
        std::vector<float> m_ref = m0, m_simd = m0, l_ref = l0, l_simd = l0;
        std::vector<float> a_ref(rows), a_simd(rows), ps_ref(rows), ps_simd(rows);
        std::vector<uint8_t> p_ref(rows * ldp, 7), p_simd(rows * ldp, 7);
        ref.softmax(s.data(), lds, rows, cols, valid, row_scale.data(), k_scale.data(),
                    m_ref.data(), l_ref.data(), a_ref.data(), ps_ref.data(), p_ref.data(), ldp);
        simd.softmax(s.data(), lds, rows, cols, valid, row_scale.data(), k_scale.data(),
                     m_simd.data(), l_simd.data(), a_simd.data(), ps_simd.data(), p_simd.data(),
                     ldp);
        for (int r = 0; r < rows; ++r) {
          SCOPED_TRACE("row " + std::to_string(r));
          ASSERT_NEAR(m_simd[r], m_ref[r], 1e-5f * (1.0f + std::fabs(m_ref[r])));
          ASSERT_NEAR(a_simd[r], a_ref[r], 1e-5f * a_ref[r]);
          ASSERT_NEAR(ps_simd[r], ps_ref[r], 1e-5f * ps_ref[r]);
          int differing = 0;
          for (int c = 0; c < cols; ++c) {
            const int got = p_simd[r * ldp + c], want = p_ref[r * ldp + c];
            if (c >= valid) {
              ASSERT_EQ(got, 0) << "padding key " << c;
            }
            ASSERT_LE(std::abs(got - want), 1) << "key " << c;
            differing += got != want;
            ++codes;
          }
          off_by_one += differing;
          float sum_ref = 0.0f, sum_simd = 0.0f;
          for (int i = 0; i < kSumLanes; ++i) {
            sum_ref += l_ref[r * kSumLanes + i];
            sum_simd += l_simd[r * kSumLanes + i];
          }
          ASSERT_NEAR(sum_simd, sum_ref, 1e-5f * sum_ref + differing * ps_ref[r]);
        }
      }
    }
  }
  // The cubic exp2 moves a code across a rounding boundary only rarely.
  EXPECT_LT(off_by_one, codes / 100) << off_by_one << " of " << codes;
}

// Rows with a few outlier channels, as vision activations have them, and one all-zero row.
std::vector<float> ActivationRows(int rows, int64_t stride, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(rows * stride);
  for (float& v : x) v = normal(rng);
  for (int r = 0; r < rows; ++r) x[r * stride + (r * 7) % 16] *= 40.0f;
  if (rows > 2) std::fill_n(x.begin() + 2 * stride, stride, 0.0f);
  return x;
}

TEST_P(Int8KernelTwins, QuantizersAreBitIdentical) {
  std::mt19937 rng(23);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const int d : {16, 40, 64, 72, 128, 256}) {
    const int dp = (d + 15) / 16 * 16;
    const int64_t stride = 3 * d + 5;  // rows inside a wider qkv row, as in the tower
    for (const int rows : {1, 5, 16}) {
      SCOPED_TRACE("d=" + std::to_string(d) + " rows=" + std::to_string(rows));
      const auto x = ActivationRows(rows, stride, rng);
      std::vector<float> center(rows * dp);  // one per row, as per head
      for (float& c : center) c = normal(rng);
      for (const float* ctr : {static_cast<const float*>(nullptr), std::as_const(center).data()}) {
        std::vector<int8_t> c_ref(rows * dp, 9), c_simd(rows * dp, -9);
        std::vector<float> s_ref(rows), s_simd(rows, -1.0f);
        std::vector<int32_t> sum_ref(rows), sum_simd(rows, -1);
        ref.quantize_rotated(x.data(), stride, rows, d, dp, ctr, c_ref.data(), s_ref.data(),
                             sum_ref.data());
        simd.quantize_rotated(x.data(), stride, rows, d, dp, ctr, c_simd.data(), s_simd.data(),
                              sum_simd.data());
        EXPECT_EQ(c_simd, c_ref);
        EXPECT_EQ(s_simd, s_ref);
        EXPECT_EQ(sum_simd, sum_ref);
        int32_t total = 0, amax = 0;
        for (int i = 0; i < dp; ++i) {
          total += c_ref[i];
          amax = std::max(amax, std::abs(int32_t{c_ref[i]}));
        }
        EXPECT_EQ(sum_ref[0], total);
        EXPECT_EQ(amax, 127) << "the row's largest value sets its scale";
      }

      std::vector<float> mean(d), inv(d);
      for (int i = 0; i < d; ++i) {
        mean[i] = normal(rng);
        inv[i] = i % 9 == 4 ? 0.0f : 30.0f * std::fabs(normal(rng));  // some constant channels
      }
      const int64_t gb = Int8GroupLayout::GroupBytes(dp);
      std::vector<int8_t> g_ref(gb, 9), g_simd(gb, -9);
      ref.quantize_values(x.data(), stride, rows, d, dp, mean.data(), inv.data(), g_ref.data());
      simd.quantize_values(x.data(), stride, rows, d, dp, mean.data(), inv.data(), g_simd.data());
      EXPECT_EQ(g_simd, g_ref);
      const int j = rows - 1, i = d - 1;
      const float want = std::nearbyint((x[j * stride + i] - mean[i]) * inv[i]);
      EXPECT_EQ(g_ref[Int8GroupLayout::Value(j, i, dp)], std::clamp(want, -127.0f, 127.0f));
      if (rows < kKeyGroup) {
        EXPECT_EQ(g_ref[Int8GroupLayout::Value(rows, 0, dp)], 0);
      }
    }
  }
}

TEST(Int8AttentionKernels, TierSelection) {
  EXPECT_NE(Int8AttentionKernelsFor(CpuTier::kScalar).qk, nullptr);
#if defined(__aarch64__)
  // The neon tier takes the sdot products exactly where the CPU has dotprod, and the
  // ARMv8.0 softmax and quantizers always.
  const Int8AttentionKernels neon = Int8AttentionKernelsFor(CpuTier::kNeon);
  const Int8AttentionKernels base = NeonInt8AttentionKernels();
  const bool dotprod = GetCpuFeatures().arm_dotprod;
  EXPECT_NE(neon.qk, nullptr);
  EXPECT_EQ(neon.qk != base.qk, dotprod);
  EXPECT_EQ(neon.pv != base.pv, dotprod);
  EXPECT_EQ(neon.softmax, base.softmax);
  EXPECT_EQ(neon.quantize_rotated, base.quantize_rotated);
  EXPECT_EQ(neon.quantize_values, base.quantize_values);
  if (dotprod) {  // built for ARMv8.2: called only where it runs
    EXPECT_EQ(neon.qk, NeonDotProdInt8AttentionKernels().qk);
    EXPECT_EQ(neon.pv, NeonDotProdInt8AttentionKernels().pv);
  }
#else
  EXPECT_EQ(Int8AttentionKernelsFor(CpuTier::kNeon).qk, nullptr);
#endif
#if defined(__x86_64__)
  EXPECT_NE(Int8AttentionKernelsFor(CpuTier::kAvx2).qk, nullptr);
  // AVX-512 without VNNI: its own 512-bit kernels, neither AVX2's nor the VNNI tier's.
  const Int8AttentionKernels bw = Int8AttentionKernelsFor(CpuTier::kAvx512);
  for (CpuTier other : {CpuTier::kAvx2, CpuTier::kAvx512Vnni}) {
    const Int8AttentionKernels k = Int8AttentionKernelsFor(other);
    EXPECT_NE(bw.qk, k.qk);
    EXPECT_NE(bw.pv, k.pv);
    EXPECT_NE(bw.softmax, k.softmax);
  }
  EXPECT_NE(Int8AttentionKernelsFor(CpuTier::kAvx512Vnni).pv, nullptr);
  EXPECT_NE(Int8AttentionKernelsFor(CpuTier::kAvx512Vnni).pv,
            Int8AttentionKernelsFor(CpuTier::kAvx2).pv);
  EXPECT_EQ(Int8AttentionKernelsFor(CpuTier::kAvx512Bf16).pv,
            Int8AttentionKernelsFor(CpuTier::kAvx512Vnni).pv);
  // AVX-VNNI: its own products, AVX2's softmax and quantizers.
  const Int8AttentionKernels vnni = Int8AttentionKernelsFor(CpuTier::kAvxVnni);
  const Int8AttentionKernels avx2 = Int8AttentionKernelsFor(CpuTier::kAvx2);
  EXPECT_NE(vnni.qk, avx2.qk);
  EXPECT_NE(vnni.pv, avx2.pv);
  EXPECT_EQ(vnni.softmax, avx2.softmax);
  EXPECT_EQ(vnni.quantize_rotated, avx2.quantize_rotated);
  EXPECT_EQ(vnni.quantize_values, avx2.quantize_values);
#endif
}

}  // namespace
}  // namespace qvl::kernels
