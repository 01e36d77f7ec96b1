#include "ops/norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace qvl {
namespace {

TEST(RmsNorm, MatchesFormula) {
  const std::vector<float> x = {1, -2, 3, 4, 0.5f, 0.25f, -1, 2};
  const std::vector<float> w = {1, 2, 0.5f, 1};
  std::vector<float> y(8);
  RmsNorm(x.data(), w.data(), 2, 4, 4, 1e-6f, y.data());
  for (int r = 0; r < 2; ++r) {
    double ms = 0;
    for (int i = 0; i < 4; ++i) ms += x[r * 4 + i] * x[r * 4 + i];
    const double inv = 1 / std::sqrt(ms / 4 + 1e-6);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[r * 4 + i], w[i] * x[r * 4 + i] * inv, 1e-6);
  }
  // In place with a row stride (q/k heads inside a wider row).
  std::vector<float> z = x;
  RmsNorm(z.data(), w.data(), 2, 2, 4, 1e-6f, z.data());
  EXPECT_NEAR(z[0], 1 / std::sqrt((1 + 4) / 2.0 + 1e-6), 1e-6);
  EXPECT_EQ(z[2], 3);  // untouched outside `dim`
}

TEST(LayerNorm, MatchesFormula) {
  const std::vector<float> x = {1, 2, 3, 6};
  const std::vector<float> w = {1, 1, 2, 1}, b = {0, 1, 0, 0};
  std::vector<float> y(4);
  LayerNorm(x.data(), w.data(), b.data(), 1, 4, 1e-6f, y.data());
  const double mean = 3, var = (4 + 1 + 0 + 9) / 4.0;
  const double inv = 1 / std::sqrt(var + 1e-6);
  EXPECT_NEAR(y[0], (1 - mean) * inv, 1e-6);
  EXPECT_NEAR(y[1], (2 - mean) * inv + 1, 1e-6);
  EXPECT_NEAR(y[2], 0.0, 1e-6);
  EXPECT_NEAR(y[3], (6 - mean) * inv, 1e-6);
}

TEST(ScaleToUnitLength, DividesByTheLengthAndLeavesZeroAlone) {
  std::vector<float> v = {3, -4};
  ScaleToUnitLength(v);
  EXPECT_FLOAT_EQ(v[0], 0.6f);
  EXPECT_FLOAT_EQ(v[1], -0.8f);
  std::vector<float> zero = {0, 0, 0};
  ScaleToUnitLength(zero);
  EXPECT_EQ(zero, (std::vector<float>{0, 0, 0}));
}

}  // namespace
}  // namespace qvl
