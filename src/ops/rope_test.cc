#include "ops/rope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace qvl {
namespace {

TEST(Rope, RotatesHalfPairs) {
  // One token, two heads of d = 4: pairs (0,2) and (1,3).
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<float> c = {std::cos(0.5f), std::cos(1.0f)};
  const std::vector<float> s = {std::sin(0.5f), std::sin(1.0f)};
  ApplyRope(x.data(), 1, 2, 4, 8, c.data(), s.data());
  EXPECT_NEAR(x[0], 1 * c[0] - 3 * s[0], 1e-6);
  EXPECT_NEAR(x[2], 3 * c[0] + 1 * s[0], 1e-6);
  EXPECT_NEAR(x[1], 2 * c[1] - 4 * s[1], 1e-6);
  EXPECT_NEAR(x[3], 4 * c[1] + 2 * s[1], 1e-6);
  EXPECT_NEAR(x[4], 5 * c[0] - 7 * s[0], 1e-6);
  EXPECT_NEAR(x[7], 8 * c[1] + 6 * s[1], 1e-6);
}

}  // namespace
}  // namespace qvl
