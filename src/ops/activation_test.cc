#include "ops/activation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace qvl {
namespace {

TEST(Activation, GeluVariantsMatchDefinitions) {
  const std::vector<float> xs = {-4, -1.5f, -0.1f, 0, 0.3f, 1, 2.5f, 6};
  std::vector<float> t = xs, e = xs;
  GeluTanh(t.data(), t.size());
  GeluErf(e.data(), e.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i];
    EXPECT_NEAR(t[i], 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))),
                1e-6);
    EXPECT_NEAR(e[i], 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))), 1e-6);
  }
  // The two GELUs differ measurably: mixing them up must fail the golden tests.
  EXPECT_GT(std::fabs(t[1] - e[1]), 1e-4);
}

TEST(Activation, SiluMulAndAdd) {
  const std::vector<float> g = {-2, 0, 1.5f}, u = {3, 4, -2};
  std::vector<float> out(3);
  SiluMul(g.data(), u.data(), 3, out.data());
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(out[i], g[i] / (1 + std::exp(-g[i])) * u[i], 1e-6);
  AddInPlace(out.data(), u.data(), 3);
  EXPECT_NEAR(out[1], 4, 1e-6);
}

// The normalizer of a log-softmax against a double sum, over a vocabulary's worth of
// logits and over values whose exponentials alone would overflow or vanish.
TEST(Activation, LogSumExpIsStable) {
  std::vector<float> logits(151936);
  for (size_t i = 0; i < logits.size(); ++i) {
    logits[i] = static_cast<float>(std::sin(static_cast<double>(i) * 0.37)) * 8.0f - 2.0f;
  }
  for (const float offset : {0.0f, 500.0f, -500.0f}) {
    std::vector<float> x = logits;
    double largest = -1e300;
    for (float& v : x) {
      v += offset;
      largest = std::max(largest, static_cast<double>(v));
    }
    double sum = 0;
    for (const float v : x) sum += std::exp(static_cast<double>(v) - largest);
    EXPECT_NEAR(LogSumExp(x.data(), static_cast<int64_t>(x.size())), largest + std::log(sum), 2e-4)
        << offset;
  }
  const std::vector<float> one = {-3.5f};
  EXPECT_FLOAT_EQ(LogSumExp(one.data(), 1), -3.5f);
}

}  // namespace
}  // namespace qvl
