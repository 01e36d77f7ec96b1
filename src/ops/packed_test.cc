// Packed weight formats: packing round trips, every tier against the scalar twin (bit for
// bit where ops/packed_kernels.h promises it), the scalar twin against a double-precision
// reference, and batch invariance of MatMul for every weight format.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "base/bf16.h"
#include "base/cpu_features.h"
#include "base/error.h"
#include "ops/hadamard.h"
#include "ops/linear.h"
#include "ops/packed_kernels.h"
#include "ops/weight_pack.h"
#include "ops/weight_pack_internal.h"

namespace qvl {
namespace {

std::vector<float> RandomVector(size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<CpuTier> CompiledTiers() { return SupportedTiers(); }

struct Shape {
  int64_t m, n, k;
};
// m = 1..4 (Q8: 1..8, Q4: 1..16 in passes of 8) take the streaming (decode) kernels,
// larger m the register tiles (Q8's first row tile prefetching up to 32 rows); on AMX,
// tiles of 16 rows (pairs of them for bf16) and a partial last tile.
const Shape kShapes[] = {{1, 1, 1},     {1, 7, 13},    {3, 17, 31},   {5, 33, 65},  {8, 64, 64},
                         {9, 130, 257}, {13, 50, 100}, {2, 16, 128},  {4, 40, 200}, {27, 40, 96},
                         {11, 70, 320}, {16, 16, 64},  {37, 35, 160}, {50, 48, 129}};

const WeightFormat kPackedFormats[] = {WeightFormat::kBF16Packed, WeightFormat::kQ8,
                                       WeightFormat::kQ4, WeightFormat::kW8A8};

// A packed weight and the rows of x prepared for it, with a kernel tier to run.
struct Problem {
  Shape s;
  WeightFormat format;
  PackedLayout layout;
  std::vector<float> x, w, bias;
  std::vector<uint8_t> packed;
  std::vector<uint16_t> xb;  // bf16 x, padded
  std::vector<int8_t> codes;
  std::vector<float> factors, exps, row_scales;
  std::vector<int32_t> corr;
  std::vector<float> steps;  // W8A8

  Problem(const Shape& shape, WeightFormat f, std::mt19937& rng) : s(shape), format(f) {
    layout = PackedLayoutFor(f, s.n, s.k);
    x = RandomVector(s.m * s.k, rng);
    w = RandomVector(s.n * s.k, rng, 0.1f);
    bias = RandomVector(s.n, rng);
    packed.resize(layout.bytes() + 64);
    PackPanels({DType::kF32, s.n, s.k, w.data()}, f, 0, layout.panels, Aligned());
  }
  uint8_t* Aligned() {
    return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(packed.data()) + 63) & ~63ull);
  }

  // y = x W^T + bias, or with `base`, y = base + (x W^T + bias) in the kernels' stores.
  std::vector<float> Run(const kernels::PackedKernels& kern,
                         const std::vector<float>* base = nullptr) {
    const int64_t kp = layout.padded_k;
    std::vector<float> y = base ? *base : std::vector<float>(s.m * s.n, NAN);
    kernels::PanelRange r;
    r.w = Aligned();
    r.panels = layout.panels;
    r.panel_bytes = layout.panel_bytes;
    r.kp = kp;
    r.bias = bias.data();
    r.y = y.data();
    r.ldy = s.n;
    r.n = s.n;
    r.accumulate = base != nullptr;
    if (format == WeightFormat::kBF16Packed) {
      xb.assign(s.m * kp, 0);
      for (int64_t i = 0; i < s.m; ++i)
        for (int64_t c = 0; c < s.k; ++c) xb[i * kp + c] = F32ToBf16(x[i * s.k + c]);
      kern.bf16(xb.data(), s.m, r);
    } else if (format == WeightFormat::kW8A8) {
      kern.w8a8(QuantizeW8A8(kern), s.m, r);
    } else {
      kernels::QuantizedRows q = Quantize(kern);
      (format == WeightFormat::kQ8 ? kern.q8 : kern.q4)(q, s.m, r);
    }
    return y;
  }

  kernels::QuantizedRows Quantize(const kernels::PackedKernels& kern) {
    const int64_t kp = layout.padded_k;
    codes.assign(s.m * kp, 99);
    factors.assign(s.m * kp / 32, NAN);
    exps.assign(s.m * kp / 32, NAN);
    corr.assign(s.m * kp / 32, 99);
    row_scales.assign(s.m, NAN);
    const kernels::QuantizedRows q{codes.data(), factors.data(),    exps.data(),
                                   corr.data(),  row_scales.data(), kp};
    kern.quantize(x.data(), s.k, s.m, s.k, q);
    return q;
  }

  kernels::RowCodes QuantizeW8A8(const kernels::PackedKernels& kern) {
    const int64_t kp = layout.padded_k;
    codes.assign(s.m * kp, 99);
    steps.assign(s.m, NAN);
    corr.assign(s.m, 99);
    const kernels::RowCodes q{codes.data(), steps.data(), corr.data(), kp};
    kern.quantize_w8a8(x.data(), s.k, s.m, s.k, q);
    return q;
  }

  // The x a W8A8 kernel sees, rotated back (H H = block * I): row i, kp values.
  std::vector<float> W8A8RowSeen(int64_t i) const {
    const int64_t kp = layout.padded_k, block = W8A8RotationBlock(kp);
    std::vector<float> v(kp);
    for (int64_t c = 0; c < kp; ++c) v[c] = codes[i * kp + c] * steps[i] / float(block);
    HadamardBlocks(v.data(), kp, block);
    return v;
  }

  // y from the decoded weights and the x the kernels see, in double.
  std::vector<double> Reference() {
    std::vector<double> y(s.m * s.n);
    std::vector<float> row(s.k);
    const int64_t kp = layout.padded_k;
    std::vector<double> xs(s.m * s.k);
    for (int64_t i = 0; i < s.m; ++i) {
      const std::vector<float> seen =
          format == WeightFormat::kW8A8 ? W8A8RowSeen(i) : std::vector<float>();
      for (int64_t c = 0; c < s.k; ++c) {
        if (format == WeightFormat::kW8A8) {
          xs[i * s.k + c] = seen[c];
        } else if (format == WeightFormat::kBF16Packed) {
          xs[i * s.k + c] = Bf16ToF32(F32ToBf16(x[i * s.k + c]));
        } else {
          xs[i * s.k + c] =
              double(codes[i * kp + c]) * factors[i * kp / 32 + c / 32] * row_scales[i];
        }
      }
    }
    for (int64_t j = 0; j < s.n; ++j) {
      UnpackRow(Aligned(), format, s.n, s.k, j, row.data());
      for (int64_t i = 0; i < s.m; ++i) {
        double acc = bias[j];
        for (int64_t c = 0; c < s.k; ++c) acc += xs[i * s.k + c] * row[c];
        y[i * s.n + j] = acc;
      }
    }
    return y;
  }
};

TEST(WeightPack, RoundTripsWithinTheFormatsPrecision) {
  std::mt19937 rng(11);
  const int64_t n = 37, k = 100;
  const auto w = RandomVector(n * k, rng);
  for (WeightFormat f : kPackedFormats) {
    const PackedLayout l = PackedLayoutFor(f, n, k);
    EXPECT_EQ(l.panels, 3);
    EXPECT_EQ(l.panel_bytes % 64, 0);
    std::vector<uint8_t> packed(l.bytes());
    PackPanels({DType::kF32, n, k, w.data()}, f, 0, l.panels, packed.data());
    std::vector<float> row(k);
    for (int64_t j = 0; j < n; ++j) {
      UnpackRow(packed.data(), f, n, k, j, row.data());
      if (f == WeightFormat::kW8A8) {
        // Rounding errors of the rotated row (about a 300th of its amax) come back spread
        // over the block: about 1 % of the row's rms each, under 5 % here.
        double sq = 0;
        for (int64_t c = 0; c < k; ++c) sq += double(w[j * k + c]) * w[j * k + c];
        const float rms = static_cast<float>(std::sqrt(sq / k));
        for (int64_t c = 0; c < k; ++c) {
          ASSERT_NEAR(row[c], w[j * k + c], 0.05f * rms) << "w8a8 row " << j << " col " << c;
        }
        continue;
      }
      for (int64_t b = 0; b < k; b += 32) {
        float amax = 0;
        for (int64_t c = b; c < std::min(k, b + 32); ++c)
          amax = std::max(amax, std::fabs(w[j * k + c]));
        // Q4: half the widest gap between levels (39 / 127), plus a little for clipping.
        const float tol = f == WeightFormat::kBF16Packed ? amax / 256
                          : f == WeightFormat::kQ8       ? amax / 127 * 0.51f + 1e-6f
                                                         : amax * 0.2f + 1e-6f;
        for (int64_t c = b; c < std::min(k, b + 32); ++c) {
          ASSERT_NEAR(row[c], w[j * k + c], tol)
              << WeightFormatName(f) << " row " << j << " col " << c;
        }
      }
    }
  }
}

// A row whose rotation lands on the int8 grid (w = q H / 2 with max |q| = 127) packs to
// those codes with step 1/2 and unpacks to itself exactly; a zero or non-finite row packs
// to zero codes and a zero step.
TEST(WeightPack, W8A8RowsOnTheGridRoundTripExactly) {
  const int64_t k = 128;
  std::mt19937 rng(13);
  std::uniform_int_distribution<int> code(-127, 127);
  std::vector<float> w(2 * k, 0.0f);
  std::vector<int> q(k);
  for (int64_t c = 0; c < k; ++c) q[c] = c == 17 ? -127 : code(rng);
  for (int64_t c = 0; c < k; ++c) w[c] = 0.5f * q[c];
  HadamardBlocks(w.data(), k, W8A8RotationBlock(k));
  w[k + 5] = NAN;
  const PackedLayout l = PackedLayoutFor(WeightFormat::kW8A8, 2, k);
  std::vector<uint8_t> packed(l.bytes());
  PackPanels({DType::kF32, 2, k, w.data()}, WeightFormat::kW8A8, 0, 1, packed.data());
  const float* scales = reinterpret_cast<const float*>(packed.data() + k * kPanelRows);
  EXPECT_EQ(scales[0], 0.5f);
  EXPECT_EQ(scales[1], 0.0f);
  for (int64_t c = 0; c < k; ++c) {
    EXPECT_EQ(packed[(c / 4) * 64 + c % 4], q[c] + 128) << c;
    EXPECT_EQ(packed[(c / 4) * 64 + 4 + c % 4], 128) << c;
  }
  std::vector<float> row(k);
  UnpackRow(packed.data(), WeightFormat::kW8A8, 2, k, 0, row.data());
  for (int64_t c = 0; c < k; ++c) EXPECT_EQ(row[c], w[c]) << c;
}

// W8A8 keeps K exact in int32 up to kW8A8MaxDepth and refuses deeper rows.
TEST(WeightPack, W8A8RefusesRowsDeeperThanItsSums) {
  const int64_t k = kW8A8MaxDepth + 64;
  std::vector<float> w(k, 1.0f);
  std::vector<uint8_t> packed(PackedLayoutFor(WeightFormat::kW8A8, 1, k).bytes());
  try {
    PackPanels({DType::kF32, 1, k, w.data()}, WeightFormat::kW8A8, 0, 1, packed.data());
    FAIL() << "packed a row of " << k;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at most 32768"), std::string::npos) << e.what();
  }
}

TEST(WeightPack, PanelsCanBePackedSeparately) {
  std::mt19937 rng(5);
  const int64_t n = 50, k = 70;
  const auto w = RandomVector(n * k, rng);
  for (WeightFormat f : kPackedFormats) {
    const PackedLayout l = PackedLayoutFor(f, n, k);
    std::vector<uint8_t> whole(l.bytes()), parts(l.bytes());
    PackPanels({DType::kF32, n, k, w.data()}, f, 0, l.panels, whole.data());
    for (int64_t p = 0; p < l.panels; ++p) {
      PackPanels({DType::kF32, n, k, w.data()}, f, p, p + 1, parts.data() + p * l.panel_bytes);
    }
    EXPECT_EQ(whole, parts) << WeightFormatName(f);
  }
}

TEST(WeightPack, Q4BlocksOnTheLevelsRoundTripAndZeroBlocksStayZero) {
  float block[32] = {};
  uint8_t codes[32];
  EXPECT_EQ(QuantizeQ4Block(block, codes), 0);
  for (uint8_t c : codes) EXPECT_EQ(kQ4Levels[c], 0);
  // Every level once or twice, scale 0.5 (exact in float16): quantized without error.
  for (int i = 0; i < 32; ++i) block[i] = 0.5f * kQ4Levels[(i * 7) % 16];
  EXPECT_FLOAT_EQ(F16ToF32(QuantizeQ4Block(block, codes)), 0.5f);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(codes[i], (i * 7) % 16) << i;
  // Mirrored, the largest magnitude is +63.5: the scale turns negative to put it on -127.
  for (float& v : block) v = -v;
  EXPECT_FLOAT_EQ(F16ToF32(QuantizeQ4Block(block, codes)), -0.5f);
  // Too small for a float16 scale (down to denormals), or not finite: a zero block.
  for (const float tiny : {1e-7f, 1e-30f, 1e-40f}) {
    std::fill(block, block + 32, 0.0f);
    block[5] = tiny;
    EXPECT_EQ(QuantizeQ4Block(block, codes), 0) << tiny;
    for (uint8_t c : codes) EXPECT_EQ(kQ4Levels[c], 0);
  }
  for (const float bad : {NAN, INFINITY}) {
    block[3] = bad;
    EXPECT_EQ(QuantizeQ4Block(block, codes), 0);
    for (uint8_t c : codes) EXPECT_EQ(kQ4Levels[c], 0);
  }
}

// Panel blocks that reach every branch of QuantizeQ8Block and QuantizeQ4Block: normal
// weights from 1e-8 to 1e4 (float16 scales from subnormal to overflow), one outlier, ties
// on the grid, blocks on the levels, constant blocks, zeros, tiny values, NaN and infinity.
std::vector<float> EdgeBlocks(std::mt19937& rng) {
  std::vector<float> rows;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> level(0, 15), lane(0, 31), kind(0, 9);
  for (int block = 0; block < 6000; ++block) {
    const float scale = std::pow(10.0f, static_cast<float>(block % 13) - 8.0f);
    float b[32];
    switch (kind(rng)) {
      case 0:  // on the levels of a power-of-two scale
        for (float& v : b) v = std::ldexp(static_cast<float>(kQ4Levels[level(rng)]), -7);
        break;
      case 1:  // integers: products land on .5 of the grid
        for (float& v : b) v = static_cast<float>(level(rng) - 8) * 0.25f;
        break;
      case 2:  // constant
        std::fill(b, b + 32, scale * (block % 2 ? -1.0f : 1.0f));
        break;
      default:
        for (float& v : b) v = scale * normal(rng);
        break;
    }
    switch (block % 17) {
      case 0:
        b[lane(rng)] *= 50.0f;
        break;
      case 1:
        std::fill(b, b + 32, 0.0f);
        break;
      case 2:
        b[lane(rng)] = NAN;
        break;
      case 3:
        b[lane(rng)] = -INFINITY;
        break;
      case 4:
        std::fill(b, b + 32, 0.0f);
        b[lane(rng)] = block % 3 ? 1e-30f : 1e-40f;
        break;
      default:
        break;
    }
    rows.insert(rows.end(), b, b + 32);
  }
  return rows;
}

TEST(WeightPack, PanelQuantizersOfEveryTierMatchTheScalarPackers) {
  std::mt19937 rng(31);
  const std::vector<float> rows = EdgeBlocks(rng);
  const size_t blocks = rows.size() / 32;
  constexpr int kPanel = kPanelRows * 32;
  const pack::PanelBlockQuantizers scalar = pack::ScalarPanelBlockQuantizers();
  for (const bool q4 : {false, true}) {
    SCOPED_TRACE(q4 ? "q4" : "q8");
    std::vector<uint16_t> want_scales(blocks), got_scales(blocks);
    std::vector<uint8_t> want_codes(rows.size()), got_codes(rows.size());
    for (size_t at = 0; at < rows.size(); at += kPanel) {
      (q4 ? scalar.q4 : scalar.q8)(&rows[at], 32, &want_scales[at / 32], &want_codes[at]);
    }
    int zero_scales = 0, subnormal_scales = 0, infinite_scales = 0;
    for (uint16_t s : want_scales) {
      zero_scales += s == 0;
      subnormal_scales += s != 0 && (s & 0x7c00) == 0;
      infinite_scales += (s & 0x7fff) == 0x7c00;
    }
    EXPECT_GT(zero_scales, 100);
    EXPECT_GT(subnormal_scales, 100);
    if (!q4) {
      EXPECT_GT(infinite_scales, 10);  // Q4 makes such blocks zero blocks
    }
    for (CpuTier tier : CompiledTiers()) {
      SCOPED_TRACE(CpuTierName(tier));
      const pack::PanelBlockQuantizers quantizers = pack::PanelBlockQuantizersFor(tier);
      for (size_t at = 0; at < rows.size(); at += kPanel) {
        (q4 ? quantizers.q4 : quantizers.q8)(&rows[at], 32, &got_scales[at / 32], &got_codes[at]);
      }
      for (size_t b = 0; b < blocks; ++b) {
        ASSERT_EQ(got_scales[b], want_scales[b]) << "block " << b;
        ASSERT_EQ(0, std::memcmp(&got_codes[b * 32], &want_codes[b * 32], 32)) << "block " << b;
      }
    }
  }
}

#if defined(__x86_64__)
TEST(WeightPack, PanelQuantizerTiers) {
  const auto q8 = [](CpuTier tier) { return pack::PanelBlockQuantizersFor(tier).q8; };
  const auto q4 = [](CpuTier tier) { return pack::PanelBlockQuantizersFor(tier).q4; };
  EXPECT_EQ(q8(CpuTier::kAvx2), q8(CpuTier::kAvxVnni));
  EXPECT_NE(q8(CpuTier::kAvx2), q8(CpuTier::kScalar));
  EXPECT_NE(q8(CpuTier::kAvx2), q8(CpuTier::kAvx512));
  EXPECT_EQ(q4(CpuTier::kAvx512), q4(CpuTier::kAmx));
  EXPECT_NE(q4(CpuTier::kAvx2), q4(CpuTier::kAvx512));
  EXPECT_NE(q4(CpuTier::kScalar), q4(CpuTier::kAvx2));
}
#endif

// The non-uniform levels beat evenly spaced ones with the best symmetric scale search.
TEST(WeightPack, Q4LevelsBeatUniformLevelsOnNormalWeights) {
  std::mt19937 rng(12);
  const auto w = RandomVector(32 * 2000, rng);
  double err = 0, uniform_err = 0;
  uint8_t codes[32];
  for (size_t b = 0; b < w.size(); b += 32) {
    const float d = F16ToF32(QuantizeQ4Block(&w[b], codes));
    float amax = 0;
    for (int i = 0; i < 32; ++i) {
      err += std::pow(w[b + i] - d * kQ4Levels[codes[i]], 2);
      amax = std::max(amax, std::fabs(w[b + i]));
    }
    double best = INFINITY;
    for (float div = 6.0f; div <= 8.0f; div += 0.05f) {
      double e = 0;
      for (int i = 0; i < 32; ++i) {
        const float q = std::clamp(std::nearbyint(w[b + i] * div / amax), -8.0f, 7.0f);
        e += std::pow(w[b + i] - q * amax / div, 2);
      }
      best = std::min(best, e);
    }
    uniform_err += best;
  }
  EXPECT_LT(err, 0.9 * uniform_err);
}

// The row's mantissa and the blocks' exponents minimize the sum of the squared steps,
// each block taking the least step c * 2^e >= amax / 127 (found here with frexp and a
// search over every mantissa); zero, tiny, infinite and NaN blocks take exponent 0.
TEST(PackedKernels, BlockExponentsGiveTheLeastSquaredSteps) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> exp(-30, 12);
  for (int row = 0; row < 200; ++row) {
    std::vector<float> amax(1 + row % 70);
    for (float& a : amax) a = std::ldexp(mant(rng), exp(rng));
    if (amax.size() > 5) {
      amax[1] = 0.0f;
      amax[2] = 1e-38f;
      amax[3] = std::numeric_limits<float>::infinity();
      amax[4] = NAN;
    }
    auto least_exponent = [](float a, float c) {
      int e2;
      const float m = 2.0f * std::frexp(a / 127.0f, &e2);  // a / 127 = m * 2^(e2 - 1)
      return e2 - 1 + (m > c ? 1 : 0);
    };
    int want = 0;
    double want_cost = 0.0;
    for (int j = 0; j < 8; ++j) {
      double cost = 0.0;
      for (float a : amax) {
        if (kernels::Quantizable(a)) {
          cost += std::pow(std::ldexp(double{kernels::kRowMantissa[j]},
                                      least_exponent(a, kernels::kRowMantissa[j])),
                           2);
        }
      }
      if (j == 0 || cost < want_cost) {
        want = j;
        want_cost = cost;
      }
    }
    std::vector<float> exps(amax.size(), -99.0f);
    const int got = kernels::ChooseBlockExponents(amax.data(), std::ssize(amax), exps.data());
    ASSERT_EQ(got, want) << "row " << row;
    for (size_t b = 0; b < amax.size(); ++b) {
      const float c = kernels::kRowMantissa[got];
      EXPECT_EQ(exps[b], kernels::Quantizable(amax[b]) ? least_exponent(amax[b], c) : 0)
          << "row " << row << " block " << b;
    }
  }
}

TEST(PackedKernels, QuantizeRowsIsTheSameOnEveryTier) {
  std::mt19937 rng(2);
  const kernels::PackedKernels scalar = kernels::ScalarPackedKernels();
  for (const Shape& s : kShapes) {
    Problem want(s, WeightFormat::kQ8, rng);
    want.x[0] = 0.0f;  // zero and tiny blocks take the no-division path
    if (s.k > 40) std::fill(want.x.begin() + 32, want.x.begin() + 64, 1e-35f);
    want.Quantize(scalar);
    for (CpuTier tier : CompiledTiers()) {
      Problem got = want;
      got.Quantize(kernels::PackedKernelsFor(tier));
      EXPECT_EQ(got.codes, want.codes) << CpuTierName(tier);
      for (auto [g, w] : {std::pair(&got.factors, &want.factors), std::pair(&got.exps, &want.exps),
                          std::pair(&got.row_scales, &want.row_scales)}) {
        EXPECT_EQ(0, std::memcmp(g->data(), w->data(), w->size() * 4)) << CpuTierName(tier);
      }
      EXPECT_EQ(got.corr, want.corr) << CpuTierName(tier);
    }
  }
}

// Rows of many blocks (the vectorized tiers work on 16 at a time), with blocks that are
// zero, tiny, infinite, hold a NaN (left out of amax, coded -127), or are far apart in
// magnitude, and a ragged last block.
TEST(PackedKernels, QuantizeRowsIsTheSameOnEveryTierForLongRows) {
  std::mt19937 rng(9);
  const kernels::PackedKernels scalar = kernels::ScalarPackedKernels();
  for (const int64_t k : {512, 1000, 1100, 4096}) {
    Problem want({3, 16, k}, WeightFormat::kQ8, rng);
    std::fill(want.x.begin() + 64, want.x.begin() + 96, 0.0f);
    std::fill(want.x.begin() + 96, want.x.begin() + 128, 1e-33f);
    want.x[200] = std::numeric_limits<float>::infinity();
    want.x[k + 300] = 3e37f;
    want.x[k + 340] = 1e-25f;
    want.x[2 * k + 5] = NAN;  // early and last in a block (reductions drop NaNs by position)
    want.x[2 * k + 31] = NAN;
    for (int64_t c = 2 * k + 32; c < 2 * k + 64; ++c) want.x[c] *= 1e20f;
    want.Quantize(scalar);
    for (CpuTier tier : CompiledTiers()) {
      SCOPED_TRACE(StrCat(CpuTierName(tier), " k=", k));
      Problem got = want;
      got.Quantize(kernels::PackedKernelsFor(tier));
      EXPECT_EQ(got.codes, want.codes);
      for (auto [g, w] : {std::pair(&got.factors, &want.factors), std::pair(&got.exps, &want.exps),
                          std::pair(&got.row_scales, &want.row_scales)}) {
        EXPECT_EQ(0, std::memcmp(g->data(), w->data(), w->size() * 4));
      }
      EXPECT_EQ(got.corr, want.corr);
    }
  }
}

// W8A8 rows: the rotation (run partly in registers on the SIMD tiers) and the per-row
// codes are bit for bit the scalar twin's, for short and long rows, a ragged end, rows
// with an outlier, a NaN, an infinity, and rows that are zero or too small to quantize.
TEST(PackedKernels, W8A8QuantizeRowsIsTheSameOnEveryTier) {
  std::mt19937 rng(10);
  const kernels::PackedKernels scalar = kernels::ScalarPackedKernels();
  for (const int64_t k : {1, 13, 64, 100, 1000, 1100, 4096}) {
    Problem want({7, 16, k}, WeightFormat::kW8A8, rng);
    want.x[0] = 1e4f;
    std::fill(want.x.begin() + k, want.x.begin() + 2 * k, 0.0f);
    std::fill(want.x.begin() + 2 * k, want.x.begin() + 3 * k, 1e-36f);
    want.x[3 * k + k / 2] = NAN;
    want.x[4 * k] = std::numeric_limits<float>::infinity();
    for (int64_t c = 5 * k; c < 6 * k; ++c) want.x[c] *= 1e30f;
    want.QuantizeW8A8(scalar);
    EXPECT_EQ(want.steps[1], 0.0f);
    EXPECT_EQ(want.steps[2], 0.0f);
    EXPECT_EQ(want.steps[4], 0.0f);
    for (CpuTier tier : CompiledTiers()) {
      SCOPED_TRACE(StrCat(CpuTierName(tier), " k=", k));
      Problem got = want;
      got.QuantizeW8A8(kernels::PackedKernelsFor(tier));
      EXPECT_EQ(got.codes, want.codes);
      EXPECT_EQ(0, std::memcmp(got.steps.data(), want.steps.data(), want.steps.size() * 4));
      EXPECT_EQ(got.corr, want.corr);
    }
  }
}

// Every rotated value lies within half a step of its code, the largest one on +-127, and
// corr is -128 times the codes' sum.
TEST(PackedKernels, W8A8ActivationStepsFitTheRotatedRow) {
  std::mt19937 rng(14);
  for (CpuTier tier : CompiledTiers()) {
    SCOPED_TRACE(CpuTierName(tier));
    Problem pr({3, 16, 200}, WeightFormat::kW8A8, rng);
    pr.x[7] = 50.0f;  // an outlier channel
    pr.QuantizeW8A8(kernels::PackedKernelsFor(tier));
    const int64_t kp = pr.layout.padded_k;
    for (int64_t i = 0; i < 3; ++i) {
      std::vector<float> rotated(kp, 0.0f);
      std::copy(pr.x.begin() + i * 200, pr.x.begin() + (i + 1) * 200, rotated.begin());
      HadamardBlocks(rotated.data(), kp, W8A8RotationBlock(kp));
      float amax = 0;
      int32_t sum = 0;
      for (int64_t c = 0; c < kp; ++c) {
        amax = std::max(amax, std::fabs(rotated[c]));
        EXPECT_LE(std::fabs(rotated[c] - pr.codes[i * kp + c] * pr.steps[i]),
                  0.5 * pr.steps[i] * (1 + 1e-5))
            << c;
        sum += pr.codes[i * kp + c];
      }
      EXPECT_EQ(pr.steps[i], amax / 127.0f);
      EXPECT_EQ(pr.corr[i], -128 * sum);
    }
  }
}

// What the rotation is for: a row with a massive channel (as LLMs' hidden states have),
// quantized with one step per row as it is, loses every other channel to that step; rotated,
// the channel is spread over the block and the row keeps its precision.
TEST(PackedKernels, W8A8RotationKeepsAnOutlierChannelFromSwampingTheRow) {
  std::mt19937 rng(15);
  ThreadPool pool(2, /*pin=*/false);
  const int64_t m = 4, n = 64, k = 2048;
  auto x = RandomVector(m * k, rng);
  for (int64_t i = 0; i < m; ++i) x[i * k + 5] = 400.0f;
  const auto w = RandomVector(n * k, rng, 0.05f);
  const LinearWeight lw = LinearWeight::Prepare({DType::kF32, n, k, w.data()}, WeightFormat::kW8A8);
  std::vector<float> y(m * n);
  MatMul(x.data(), m, lw, nullptr, y.data(), MatmulPrecision::kBF16, pool);
  double err = 0, plain_err = 0, norm = 0;
  for (int64_t i = 0; i < m; ++i) {
    const float* xi = &x[i * k];
    const float step = 400.0f / 127.0f;  // one step for the row as it is
    for (int64_t j = 0; j < n; ++j) {
      double exact = 0, plain = 0;
      for (int64_t c = 0; c < k; ++c) {
        exact += double(xi[c]) * w[j * k + c];
        plain += std::nearbyint(xi[c] / step) * step * double(w[j * k + c]);
      }
      err += std::pow(y[i * n + j] - exact, 2);
      plain_err += std::pow(plain - exact, 2);
      norm += exact * exact;
    }
  }
  EXPECT_LT(std::sqrt(err / norm), 0.02);  // 0.093 unrotated
  EXPECT_LT(err, 0.05 * plain_err);
}

// Steps are c * 2^e with one mantissa c per row: blocks whose amax share a mantissa get
// the smallest c at or above it, and every x is within half a step of its code's value.
TEST(PackedKernels, ActivationStepsFitTheRow) {
  const int64_t k = 4 * 32;
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  std::vector<float> x(k);
  for (float& v : x) v = u(rng);
  for (int b = 0; b < 4; ++b) x[b * 32 + 5] = 127.0f * 1.35f * std::ldexp(1.0f, b - 2);
  std::vector<int8_t> codes(k);
  std::vector<float> factors(4), exps(4), row_scale(1);
  std::vector<int32_t> corr(4);
  for (CpuTier tier : CompiledTiers()) {
    SCOPED_TRACE(CpuTierName(tier));
    kernels::PackedKernelsFor(tier).quantize(
        x.data(), k, 1, k,
        {codes.data(), factors.data(), exps.data(), corr.data(), row_scale.data(), k});
    EXPECT_EQ(row_scale[0], kernels::kRowMantissa[4]);  // 2^(4/8) = 1.414 >= 1.35
    for (int b = 0; b < 4; ++b) {
      EXPECT_EQ(exps[b], b - 2);
      EXPECT_EQ(factors[b], std::ldexp(1.0f, b - 2));
      int32_t sum = 0;
      for (int c = b * 32; c < (b + 1) * 32; ++c) {
        const double step = double(row_scale[0]) * factors[b];
        EXPECT_LE(std::fabs(x[c] - codes[c] * step), 0.5 * step * (1 + 1e-6)) << c;
        sum += codes[c];
      }
      EXPECT_EQ(corr[b], -128 * sum);
    }
  }
}

TEST(PackedKernels, ScalarTwinMatchesDoubleReference) {
  std::mt19937 rng(3);
  const kernels::PackedKernels scalar = kernels::ScalarPackedKernels();
  for (WeightFormat f : kPackedFormats) {
    for (const Shape& s : kShapes) {
      Problem pr(s, f, rng);
      const auto y = pr.Run(scalar);
      const auto want = pr.Reference();
      for (size_t i = 0; i < y.size(); ++i) {
        ASSERT_NEAR(y[i], want[i], 1e-5 * (1 + std::fabs(want[i])) * std::sqrt(double(s.k)))
            << WeightFormatName(f) << " m=" << s.m << " n=" << s.n << " k=" << s.k << " at " << i;
      }
    }
  }
}

TEST(PackedKernels, EveryTierMatchesScalarTwin) {
  std::mt19937 rng(4);
  const kernels::PackedKernels scalar = kernels::ScalarPackedKernels();
  for (CpuTier tier : CompiledTiers()) {
    const kernels::PackedKernels kern = kernels::PackedKernelsFor(tier);
    for (WeightFormat f : kPackedFormats) {
      for (const Shape& s : kShapes) {
        Problem pr(s, f, rng);
        const auto want = pr.Run(scalar);
        const auto got = pr.Run(kern);
        // vdpbf16ps flushes denormals, the only departure from the scalar arithmetic;
        // tdpbf16ps also rounds in its own order.
        const bool exact = !(f == WeightFormat::kBF16Packed &&
                             (tier == CpuTier::kAvx512Bf16 || tier == CpuTier::kAmx));
        for (size_t i = 0; i < got.size(); ++i) {
          if (exact) {
            ASSERT_EQ(got[i], want[i])
                << CpuTierName(tier) << " " << WeightFormatName(f) << " m=" << s.m << " n=" << s.n
                << " k=" << s.k << " at " << i;
          } else {
            ASSERT_NEAR(got[i], want[i], 1e-5f * (1 + std::fabs(want[i])))
                << CpuTierName(tier) << " m=" << s.m << " n=" << s.n << " k=" << s.k;
          }
        }
      }
    }
  }
}

#if defined(__x86_64__)
// AVX-512 without BF16: bf16 widened to float on 512-bit FMA (vdpbf16ps is missing); the
// int8 formats on vpmaddubsw (Skylake-X) or on vpdpbusd with VNNI (Cascade Lake, Ice
// Lake); nothing from a BF16 build.
TEST(PackedKernels, Avx512TiersTakeTheFmaBf16KernelAndTheirInt8Kernels) {
  const kernels::PackedKernels avx512 = kernels::PackedKernelsFor(CpuTier::kAvx512);
  const kernels::PackedKernels vnni = kernels::PackedKernelsFor(CpuTier::kAvx512Vnni);
  const kernels::PackedKernels bf16 = kernels::PackedKernelsFor(CpuTier::kAvx512Bf16);
  const kernels::PackedKernels avx2 = kernels::PackedKernelsFor(CpuTier::kAvx2);
  EXPECT_EQ(vnni.q8, bf16.q8);
  EXPECT_EQ(vnni.q4, bf16.q4);
  EXPECT_EQ(vnni.w8a8, bf16.w8a8);
  EXPECT_EQ(vnni.quantize, bf16.quantize);
  EXPECT_EQ(vnni.quantize_w8a8, bf16.quantize_w8a8);
  EXPECT_NE(vnni.q8, avx2.q8);
  EXPECT_EQ(vnni.bf16, avx512.bf16);
  EXPECT_EQ(vnni.bf16_rows, avx512.bf16_rows);
  EXPECT_NE(avx512.bf16, avx2.bf16);
  EXPECT_NE(bf16.bf16, avx512.bf16);
  EXPECT_NE(avx512.q8, avx2.q8);
  EXPECT_NE(avx512.q8, vnni.q8);
  EXPECT_NE(avx512.w8a8, vnni.w8a8);
  EXPECT_NE(avx512.quantize, avx2.quantize);  // 16 blocks per reduction
  EXPECT_EQ(avx512.quantize, vnni.quantize);
}

// AVX2 with AVX-VNNI (Alder Lake and later cores, N100): the int8 formats on 256-bit
// vpdpbusd, everything else AVX2's.
TEST(PackedKernels, AvxVnniTierTakesItsInt8KernelsAndTheAvx2Rest) {
  const kernels::PackedKernels vnni = kernels::PackedKernelsFor(CpuTier::kAvxVnni);
  const kernels::PackedKernels avx2 = kernels::PackedKernelsFor(CpuTier::kAvx2);
  EXPECT_NE(vnni.q8, avx2.q8);
  EXPECT_NE(vnni.q4, avx2.q4);
  EXPECT_NE(vnni.w8a8, avx2.w8a8);
  EXPECT_NE(vnni.q8, kernels::PackedKernelsFor(CpuTier::kAvx512Vnni).q8);
  EXPECT_EQ(vnni.quantize, avx2.quantize);
  EXPECT_EQ(vnni.quantize_w8a8, avx2.quantize_w8a8);
  EXPECT_EQ(vnni.bf16, avx2.bf16);
}
#endif

#if defined(__aarch64__)
// The neon tier takes the sdot int8 kernels exactly where the CPU has dotprod (ARMv8.2:
// Cortex-A76, Neoverse N1 and later), else the ARMv8.0 smull ones; bf16 and the
// quantizers are the same either way.
TEST(PackedKernels, NeonTierTakesTheSdotKernelsExactlyWithDotProd) {
  const kernels::PackedKernels neon = kernels::PackedKernelsFor(CpuTier::kNeon);
  const kernels::PackedKernels base = kernels::NeonPackedKernels();
  const bool dotprod = GetCpuFeatures().arm_dotprod;
  EXPECT_EQ(neon.q8 != base.q8, dotprod);
  EXPECT_EQ(neon.q4 != base.q4, dotprod);
  EXPECT_EQ(neon.w8a8 != base.w8a8, dotprod);
  // NeonDotProdPackedKernels is built for ARMv8.2: called only where it runs. With i8mm
  // prefill takes the usmmla kernels (NeonTierTakesTheI8mmKernelsExactlyWithI8mm).
  if (dotprod && !GetCpuFeatures().arm_i8mm) {
    const kernels::PackedKernels dot = kernels::NeonDotProdPackedKernels();
    EXPECT_EQ(neon.q8, dot.q8);
    EXPECT_EQ(neon.q4, dot.q4);
    EXPECT_EQ(neon.w8a8, dot.w8a8);
    EXPECT_EQ(neon.quant_rows, dot.quant_rows);
  }
  EXPECT_EQ(neon.bf16, base.bf16);
  EXPECT_EQ(neon.quantize, base.quantize);
  EXPECT_EQ(neon.quantize_w8a8, base.quantize_w8a8);
  EXPECT_NE(base.q8, kernels::ScalarPackedKernels().q8);
}

// With the int8 matrix multiply extension (Neoverse N2/V1/V2, Apple M2 on) the neon tier
// takes the usmmla kernels for Q8, Q4 and W8A8, and they match the scalar twin bit for bit
// over 1..9 rows (a row alone runs sdot; odd tiles pair their last row with itself), odd
// n, partial panels and accumulating stores, called directly rather than through the
// tier's choice (a CPU without i8mm cannot run them: skipped there).
TEST(PackedKernels, NeonTierTakesTheI8mmKernelsExactlyWithI8mm) {
  const CpuFeatures& cpu = GetCpuFeatures();
  const bool i8mm = cpu.arm_i8mm && cpu.arm_dotprod;
  const kernels::PackedKernels neon = kernels::PackedKernelsFor(CpuTier::kNeon);
  const kernels::PackedKernels base = kernels::NeonPackedKernels();
  if (cpu.arm_dotprod) {
    const kernels::PackedKernels dot = kernels::NeonDotProdPackedKernels();
    EXPECT_EQ(neon.q8 != dot.q8, i8mm);
    EXPECT_EQ(neon.q4 != dot.q4, i8mm);
    EXPECT_EQ(neon.w8a8 != dot.w8a8, i8mm);
  }
  if (!i8mm) GTEST_SKIP() << "needs i8mm and dotprod (QEMU_CPU=max): " << DescribeCpu();
  const kernels::PackedKernels mm = kernels::NeonI8mmPackedKernels();
  EXPECT_EQ(neon.q8, mm.q8);
  EXPECT_EQ(neon.q4, mm.q4);
  EXPECT_EQ(neon.w8a8, mm.w8a8);
  EXPECT_EQ(neon.bf16, base.bf16);
  EXPECT_EQ(neon.quantize, base.quantize);
  std::mt19937 rng(8);
  const kernels::PackedKernels scalar = kernels::ScalarPackedKernels();
  for (WeightFormat f : {WeightFormat::kQ8, WeightFormat::kQ4, WeightFormat::kW8A8}) {
    for (int64_t m = 1; m <= 9; ++m) {
      for (const Shape& s : {Shape{m, 33, 100}, Shape{m, 16, 64}, Shape{m, 47, 2048}}) {
        SCOPED_TRACE(StrCat(WeightFormatName(f), " m=", s.m, " n=", s.n, " k=", s.k));
        Problem pr(s, f, rng);
        ASSERT_EQ(pr.Run(mm), pr.Run(scalar));
      }
    }
    for (const Shape& s : {Shape{13, 33, 1000}, Shape{27, 40, 96}, Shape{50, 48, 129}}) {
      SCOPED_TRACE(StrCat(WeightFormatName(f), " m=", s.m, " n=", s.n, " k=", s.k));
      Problem pr(s, f, rng);
      const std::vector<float> base_y = RandomVector(s.m * s.n, rng);
      ASSERT_EQ(pr.Run(mm), pr.Run(scalar));
      ASSERT_EQ(pr.Run(mm, &base_y), pr.Run(scalar, &base_y));
    }
  }
}

// The ARMv8.0 kernels bit for bit the scalar twin's on every ARM CPU, also where the
// tier runs sdot (so one run under a CPU with dotprod tests both int8 paths).
TEST(PackedKernels, NeonKernelsWithoutDotProdMatchScalarTwin) {
  std::mt19937 rng(7);
  const kernels::PackedKernels scalar = kernels::ScalarPackedKernels();
  const kernels::PackedKernels base = kernels::NeonPackedKernels();
  for (WeightFormat f : kPackedFormats) {
    for (const Shape& s : kShapes) {
      SCOPED_TRACE(StrCat(WeightFormatName(f), " m=", s.m, " n=", s.n, " k=", s.k));
      Problem pr(s, f, rng);
      ASSERT_EQ(pr.Run(base), pr.Run(scalar));
    }
    for (const Shape& s : {Shape{7, 40, 2048}, Shape{13, 33, 1000}}) {
      SCOPED_TRACE(StrCat(WeightFormatName(f), " m=", s.m, " n=", s.n, " k=", s.k));
      Problem pr(s, f, rng);
      ASSERT_EQ(pr.Run(base), pr.Run(scalar));
    }
  }
}
#endif

// The int8 tiles at a layer's depth, over both paths (decode rows stream with prefetches,
// more run as tiles from cache) and partial row tiles and panels, bit for bit the scalar
// twin's on every tier this CPU runs.
TEST(PackedKernels, Int8TiersMatchScalarTwinAtModelDepth) {
  std::mt19937 rng(6);
  const kernels::PackedKernels scalar = kernels::ScalarPackedKernels();
  for (CpuTier tier : CompiledTiers()) {
    const kernels::PackedKernels kern = kernels::PackedKernelsFor(tier);
    for (WeightFormat f : {WeightFormat::kQ8, WeightFormat::kQ4, WeightFormat::kW8A8}) {
      for (const Shape& s : {Shape{7, 40, 2048}, Shape{13, 33, 1000}}) {
        SCOPED_TRACE(StrCat(CpuTierName(tier), " ", WeightFormatName(f), " m=", s.m, " n=", s.n,
                            " k=", s.k));
        Problem pr(s, f, rng);
        ASSERT_EQ(pr.Run(kern), pr.Run(scalar));
      }
    }
  }
}

// The AMX tiles at a layer's depth (K = 2048, 64 blocks through the two C tiles) and a
// tile count with a partial last tile: the Q8 / Q4 sums bit for bit the scalar twin's.
TEST(PackedKernels, AmxTilesMatchScalarTwinAtModelDepth) {
  if (DetectedTier() != CpuTier::kAmx) {
    GTEST_SKIP() << "needs AMX (amx-tile, amx-int8, amx-bf16, permitted by the kernel); this "
                    "CPU's best tier is "
                 << CpuTierName(DetectedTier());
  }
  std::mt19937 rng(5);
  const kernels::PackedKernels scalar = kernels::ScalarPackedKernels();
  const kernels::PackedKernels amx = kernels::PackedKernelsFor(CpuTier::kAmx);
  for (WeightFormat f : kPackedFormats) {
    for (const Shape& s : {Shape{45, 40, 2048}, Shape{64, 33, 1000}}) {
      SCOPED_TRACE(StrCat(WeightFormatName(f), " m=", s.m, " n=", s.n, " k=", s.k));
      Problem pr(s, f, rng);
      const auto want = pr.Run(scalar);
      const auto got = pr.Run(amx);
      for (size_t i = 0; i < got.size(); ++i) {
        if (f == WeightFormat::kBF16Packed) {
          ASSERT_NEAR(got[i], want[i], 1e-5f * (1 + std::fabs(want[i])) * 8) << i;
        } else {
          ASSERT_EQ(got[i], want[i]) << i;
        }
      }
    }
  }
}

// A row's result must not depend on how many rows share the call, how they are chunked,
// or how many threads split the panels.
// The residual add in the stores (MatMulAdd) is the plain sum of y and the stored value.
TEST(PackedKernels, AccumulatingStoresAddToYBitForBit) {
  std::mt19937 rng(11);
  for (CpuTier tier : CompiledTiers()) {
    const kernels::PackedKernels kern = kernels::PackedKernelsFor(tier);
    for (WeightFormat f : kPackedFormats) {
      for (const Shape& s : kShapes) {
        SCOPED_TRACE(StrCat(CpuTierName(tier), " ", WeightFormatName(f), " m=", s.m, " n=", s.n,
                            " k=", s.k));
        Problem p(s, f, rng);
        const std::vector<float> base = RandomVector(s.m * s.n, rng);
        const std::vector<float> alone = p.Run(kern);
        const std::vector<float> added = p.Run(kern, &base);
        for (size_t i = 0; i < base.size(); ++i) {
          const float want = base[i] + alone[i];
          ASSERT_EQ(0, std::memcmp(&added[i], &want, 4)) << i;
        }
      }
    }
  }
}

TEST(MatMul, RowsAreBatchInvariantForEveryFormat) {
  std::mt19937 rng(9);
  ThreadPool pool3(3, /*pin=*/false), pool1(1, false);
  const int64_t m = 37, n = 203, k = 160;
  const auto x = RandomVector(m * k, rng);
  const auto w = RandomVector(n * k, rng, 0.1f);
  const auto b = RandomVector(n, rng);
  std::vector<uint16_t> wb(w.size());
  for (size_t i = 0; i < w.size(); ++i) wb[i] = F32ToBf16(w[i]);
  struct Case {
    WeightFormat format;
    MatmulPrecision precision;
  };
  for (const Case c : {Case{WeightFormat::kF32, MatmulPrecision::kF32},
                       Case{WeightFormat::kBF16, MatmulPrecision::kF32},
                       Case{WeightFormat::kBF16, MatmulPrecision::kBF16},
                       Case{WeightFormat::kBF16Packed, MatmulPrecision::kBF16},
                       Case{WeightFormat::kQ8, MatmulPrecision::kBF16},
                       Case{WeightFormat::kQ4, MatmulPrecision::kBF16},
                       Case{WeightFormat::kW8A8, MatmulPrecision::kBF16}}) {
    SCOPED_TRACE(WeightFormatName(c.format));
    const LinearWeight lw =
        LinearWeight::Prepare({DType::kBF16, n, k, wb.data()}, c.format, &pool3);
    std::vector<float> all(m * n), one(m * n), chunks(m * n);
    MatMul(x.data(), m, lw, b.data(), all.data(), c.precision, pool3);
    for (int64_t i = 0; i < m; ++i) {
      MatMul(x.data() + i * k, 1, lw, b.data(), one.data() + i * n, c.precision, pool3);
    }
    for (int64_t i0 = 0, len = 1; i0 < m; i0 += len, len = len * 2 + 1) {
      const int64_t rows = std::min(len, m - i0);
      MatMul(x.data() + i0 * k, rows, lw, b.data(), chunks.data() + i0 * n, c.precision, pool1);
    }
    EXPECT_EQ(0, std::memcmp(all.data(), one.data(), all.size() * 4));
    EXPECT_EQ(0, std::memcmp(all.data(), chunks.data(), all.size() * 4));
  }
}

TEST(LinearWeight, PackedFormatsOwnTheirBytesAndReportThem) {
  std::vector<uint16_t> w(40 * 100, 0x3f80);  // 1.0
  for (WeightFormat f : kPackedFormats) {
    const LinearWeight lw = LinearWeight::Prepare({DType::kBF16, 40, 100, w.data()}, f);
    EXPECT_EQ(lw.bytes(), static_cast<size_t>(PackedLayoutFor(f, 40, 100).bytes()));
    EXPECT_EQ(lw.owned_bytes(), lw.bytes());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(lw.data()) % 64, 0u);
  }
  EXPECT_EQ(PackedLayoutFor(WeightFormat::kQ8, 2048, 2048).bytes(), 2048 * 2048 * 17 / 16);
  EXPECT_EQ(PackedLayoutFor(WeightFormat::kQ4, 2048, 2048).bytes(), 2048 * 2048 * 9 / 16);
}

TEST(WeightFormat, NamesRoundTrip) {
  for (WeightFormat f : {WeightFormat::kF32, WeightFormat::kBF16, WeightFormat::kBF16Packed,
                         WeightFormat::kQ8, WeightFormat::kQ4, WeightFormat::kW8A8}) {
    WeightFormat parsed;
    ASSERT_TRUE(ParseWeightFormat(WeightFormatName(f), &parsed));
    EXPECT_EQ(parsed, f);
  }
  WeightFormat parsed;
  EXPECT_FALSE(ParseWeightFormat("q5", &parsed));
}

}  // namespace
}  // namespace qvl
