// Every compiled attention tier against its scalar twin on random blocks: odd row
// counts, partial key groups, odd head dims (even for bf16), masked rows.
#include "ops/attention_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "base/bf16.h"
#include "base/cpu_features.h"

namespace qvl::kernels {
namespace {

std::vector<CpuTier> SimdTiers() {
  std::vector<CpuTier> tiers;
#if defined(__x86_64__)
  for (CpuTier t : {CpuTier::kAvx2, CpuTier::kAvxVnni, CpuTier::kAvx512, CpuTier::kAvx512Vnni,
                    CpuTier::kAvx512Bf16, CpuTier::kAmx})
    if (TierSupported(t)) tiers.push_back(t);
#endif
#if defined(__aarch64__)
  if (TierSupported(CpuTier::kNeon)) tiers.push_back(CpuTier::kNeon);
#endif
  return tiers;
}

std::vector<float> Normal(size_t n, std::mt19937& rng, float sd = 1.0f) {
  std::normal_distribution<float> dist(0.0f, sd);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<uint16_t> Bf16(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = F32ToBf16(v[i]);
  return out;
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, float rel,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], rel * (1.0f + std::fabs(want[i]))) << what << " at " << i;
  }
}

struct Case {
  int rows, n_groups, d;
};
// Rows past 16 and up to a block's 64 take several AMX row tiles, the last partial.
const Case kCases[] = {{1, 1, 2},   {3, 2, 6},    {5, 3, 18},  {4, 4, 64},  {9, 4, 128},
                       {2, 1, 80},  {7, 3, 130},  {13, 4, 64}, {1, 4, 256}, {17, 4, 64},
                       {32, 3, 64}, {64, 4, 128}, {40, 2, 96}, {23, 1, 48}};

template <typename T>
void CheckQkAndPv(const AttentionKernels& simd, const AttentionKernels& ref, const Case& c,
                  std::mt19937& rng, const std::string& name) {
  const int cols = c.n_groups * kKeyGroup;
  auto convert = [](const std::vector<float>& v) {
    if constexpr (sizeof(T) == 4) {
      return v;
    } else {
      return Bf16(v);
    }
  };
  const auto q = convert(Normal(c.rows * c.d, rng));
  // Groups one after the other (as in a panel or a cache page) in even cases, apart in
  // odd ones.
  const int64_t group = kKeyGroup * c.d, gap = c.rows % 2 == 0 ? 0 : 32;
  const auto keys = convert(Normal((group + gap) * c.n_groups, rng));
  const auto values = convert(Normal((group + gap) * c.n_groups, rng));
  std::vector<const T*> kp, vp;
  for (int g = 0; g < c.n_groups; ++g) {
    kp.push_back(keys.data() + g * (group + gap));
    vp.push_back(values.data() + g * (group + gap));
  }
  std::vector<float> s_ref(c.rows * cols), s_simd(c.rows * cols, -1.0f);
  const auto p = convert(Normal(c.rows * cols, rng, 0.3f));
  const auto alpha = Normal(c.rows, rng);
  const auto o0 = Normal(c.rows * c.d, rng);
  std::vector<float> o_ref = o0, o_simd = o0;
  if constexpr (sizeof(T) == 4) {
    ref.qk_f32(q.data(), c.d, c.rows, kp.data(), c.n_groups, c.d, s_ref.data(), cols);
    simd.qk_f32(q.data(), c.d, c.rows, kp.data(), c.n_groups, c.d, s_simd.data(), cols);
    ref.pv_f32(p.data(), cols, c.rows, vp.data(), c.n_groups, c.d, alpha.data(), o_ref.data(), c.d);
    simd.pv_f32(p.data(), cols, c.rows, vp.data(), c.n_groups, c.d, alpha.data(), o_simd.data(),
                c.d);
  } else {
    ref.qk_bf16(q.data(), c.d, c.rows, kp.data(), c.n_groups, c.d, s_ref.data(), cols);
    simd.qk_bf16(q.data(), c.d, c.rows, kp.data(), c.n_groups, c.d, s_simd.data(), cols);
    ref.pv_bf16(p.data(), cols, c.rows, vp.data(), c.n_groups, c.d, alpha.data(), o_ref.data(),
                c.d);
    simd.pv_bf16(p.data(), cols, c.rows, vp.data(), c.n_groups, c.d, alpha.data(), o_simd.data(),
                 c.d);
  }
  ExpectClose(s_simd, s_ref, 1e-5f, name + " qk");
  ExpectClose(o_simd, o_ref, 1e-5f, name + " pv");
}

// Tiers may pick different reference maxima (lazy rescaling), so the test compares what
// is invariant: p * 2^m, l * 2^m and alpha * 2^m_new are the same for every valid choice.
template <typename T>
void CheckSoftmax(const AttentionKernels& simd, const AttentionKernels& ref, int rows, int cols,
                  std::mt19937& rng, const std::string& name) {
  const auto s = Normal(rows * cols, rng, 4.0f);
  const auto l0 = Normal(rows * kSumLanes, rng, 1.0f);
  std::vector<int> valid(rows);
  std::vector<float> m0(rows);
  const float scale = 0.125f * 1.4426950408889634f;
  for (int r = 0; r < rows; ++r) {
    valid[r] = (r * 7) % (cols + 1);  // 0 .. cols, partial rows included
    // Running maxima below, near and above the block's scores.
    m0[r] = r % 3 == 0 ? -std::numeric_limits<float>::infinity() : static_cast<float>(r % 5) - 2;
  }
  std::vector<float> l_start(rows * kSumLanes);
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < kSumLanes; ++i)
      l_start[r * kSumLanes + i] = r % 3 == 0 ? 0.0f : std::fabs(l0[r * kSumLanes + i]);
  std::vector<float> m_ref = m0, l_ref = l_start, m_simd = m0, l_simd = l_start;
  std::vector<float> a_ref(rows), a_simd(rows);
  std::vector<T> p_ref(rows * cols), p_simd(rows * cols);
  if constexpr (sizeof(T) == 4) {
    ref.softmax_f32(s.data(), cols, rows, cols, valid.data(), scale, m_ref.data(), l_ref.data(),
                    a_ref.data(), p_ref.data(), cols);
    simd.softmax_f32(s.data(), cols, rows, cols, valid.data(), scale, m_simd.data(), l_simd.data(),
                     a_simd.data(), p_simd.data(), cols);
  } else {
    ref.softmax_bf16(s.data(), cols, rows, cols, valid.data(), scale, m_ref.data(), l_ref.data(),
                     a_ref.data(), p_ref.data(), cols);
    simd.softmax_bf16(s.data(), cols, rows, cols, valid.data(), scale, m_simd.data(), l_simd.data(),
                      a_simd.data(), p_simd.data(), cols);
  }
  auto widen = [](T v) {
    if constexpr (sizeof(T) == 4) {
      return v;
    } else {
      return Bf16ToF32(v);
    }
  };
  // One bf16 step where the two exp2 land on either side of a rounding boundary.
  const float tol = sizeof(T) == 4 ? 2e-6f : 1.0f / 128;
  for (int r = 0; r < rows; ++r) {
    SCOPED_TRACE(name + " row " + std::to_string(r));
    float x_max = -std::numeric_limits<float>::infinity();
    for (int c = 0; c < valid[r]; ++c) x_max = std::max(x_max, s[r * cols + c] * scale);
    ASSERT_GE(m_simd[r], m0[r]);
    if (valid[r] > 0) {
      ASSERT_GE(m_simd[r], x_max - kMaxExcess);
    }
    const float shift = valid[r] > 0 ? std::exp2(m_simd[r] - m_ref[r]) : 1.0f;
    ASSERT_NEAR(a_simd[r] * shift, a_ref[r], 1e-6f * (1 + a_ref[r]));
    float sum_ref = 0, sum_simd = 0;
    for (int i = 0; i < kSumLanes; ++i) {
      sum_ref += l_ref[r * kSumLanes + i];
      sum_simd += l_simd[r * kSumLanes + i];
    }
    ASSERT_NEAR(sum_simd * shift, sum_ref, 1e-5f * sum_ref);
    for (int c = 0; c < cols; ++c) {
      const float got = widen(p_simd[r * cols + c]) * shift, want = widen(p_ref[r * cols + c]);
      ASSERT_NEAR(got, want, tol * want + 1e-30f) << "col " << c;
      if (c >= valid[r]) {
        ASSERT_EQ(widen(p_simd[r * cols + c]), 0.0f) << "masked column " << c;
      }
    }
  }
}

TEST(AttentionKernels, EverySimdTierMatchesScalarTwin) {
  const AttentionKernels ref = ScalarAttentionKernels();
  std::mt19937 rng(11);
  for (CpuTier tier : SimdTiers()) {
    for (const AttentionKernels& simd :
         {AttentionKernelsFor(tier), FullAttentionKernelsFor(tier)}) {
      for (const Case& c : kCases) {
        const std::string name =
            std::string(CpuTierName(tier)) + " rows=" + std::to_string(c.rows) +
            " groups=" + std::to_string(c.n_groups) + " d=" + std::to_string(c.d);
        CheckQkAndPv<float>(simd, ref, c, rng, name + " f32");
        CheckQkAndPv<uint16_t>(simd, ref, c, rng, name + " bf16");
      }
      for (int rows : {1, 4, 7, 33}) {
        for (int cols : {16, 48, 64}) {
          const std::string name = std::string(CpuTierName(tier)) + " softmax " +
                                   std::to_string(rows) + "x" + std::to_string(cols);
          CheckSoftmax<float>(simd, ref, rows, cols, rng, name + " f32");
          CheckSoftmax<uint16_t>(simd, ref, rows, cols, rng, name + " bf16");
        }
      }
    }
  }
}

#if defined(__aarch64__)
// Every 64-bit ARM CPU has NEON: the twin tests compare its own kernels there.
TEST(AttentionKernels, NeonTierHasItsOwnKernels) {
  EXPECT_EQ(SimdTiers(), std::vector<CpuTier>{CpuTier::kNeon});
  EXPECT_NE(AttentionKernelsFor(CpuTier::kNeon).pv_bf16, ScalarAttentionKernels().pv_bf16);
  EXPECT_EQ(FullAttentionKernelsFor(CpuTier::kNeon).pv_bf16,
            AttentionKernelsFor(CpuTier::kNeon).pv_bf16);
}
#endif

// Random int8 groups (codes -127 .. 127, scales over several magnitudes, some 0 as for a
// token past the sequence) dequantized by every tier: the same bf16 bits as the twin.
TEST(AttentionKernels, DequantKvI8MatchesScalarTwinBitForBit) {
  const AttentionKernels ref = ScalarAttentionKernels();
  std::mt19937 rng(13);
  std::uniform_int_distribution<int> code(-127, 127);
  std::uniform_real_distribution<float> exponent(-12.0f, 4.0f);
  for (CpuTier tier : SimdTiers()) {
    const AttentionKernels simd = AttentionKernelsFor(tier);
    for (int d : {32, 64, 128, 256}) {
      for (bool values : {false, true}) {
        std::vector<int8_t> codes(kKeyGroup * d);
        for (int8_t& c : codes) c = static_cast<int8_t>(code(rng));
        std::vector<float> scales(kKeyGroup * d / kKvI8Block);
        for (float& x : scales) x = std::exp2(exponent(rng));
        scales[3] = 0.0f;
        std::vector<uint16_t> got(codes.size()), want(codes.size());
        simd.dequant_kv_i8(codes.data(), scales.data(), d, values, got.data());
        ref.dequant_kv_i8(codes.data(), scales.data(), d, values, want.data());
        EXPECT_EQ(got, want) << CpuTierName(tier) << " d=" << d << (values ? " values" : " keys");
      }
    }
  }
}

// The twin against the layout's definition: one code, its block's scale, its position.
TEST(AttentionKernels, DequantKvI8PutsEachCodeAtItsBf16Place) {
  const int d = 64;
  for (bool values : {false, true}) {
    std::vector<int8_t> codes(kKeyGroup * d, 0);
    std::vector<float> scales(kKeyGroup * d / kKvI8Block, 1.0f);
    const int j = 5, i = 40;  // dims 32 .. 63 are block 1
    const int64_t at = values ? KvGroupLayout::ValueBf16(j, i, d) : KvGroupLayout::KeyBf16(j, i, d);
    codes[at] = -3;
    scales[1 * kKeyGroup + j] = 0.5f;
    std::vector<uint16_t> out(codes.size(), 0xffff);
    ScalarAttentionKernels().dequant_kv_i8(codes.data(), scales.data(), d, values, out.data());
    for (size_t e = 0; e < out.size(); ++e) {
      EXPECT_EQ(Bf16ToF32(out[e]), static_cast<int64_t>(e) == at ? -1.5f : 0.0f)
          << (values ? "values" : "keys") << " at " << e;
    }
  }
}

TEST(AttentionKernels, F32KernelsTakeOddHeadDims) {
  const AttentionKernels ref = ScalarAttentionKernels();
  std::mt19937 rng(12);
  for (CpuTier tier : SimdTiers()) {
    for (int d : {1, 7, 33, 97}) {
      CheckQkAndPv<float>(AttentionKernelsFor(tier), ref, {5, 2, d}, rng,
                          std::string(CpuTierName(tier)) + " d=" + std::to_string(d));
    }
  }
}

}  // namespace
}  // namespace qvl::kernels
