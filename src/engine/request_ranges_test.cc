#include "engine/request_ranges.h"

#include <gtest/gtest.h>

#include "base/field_error.h"

namespace qvl {
namespace {

std::string ErrorOf(const ParamRange& range, double value) {
  try {
    CheckInRange(range, value);
  } catch (const FieldError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(e.field(), range.name);
    return e.what();
  }
  return "no error";
}

TEST(RequestRanges, BoundsAreInclusiveUnlessSaidOtherwise) {
  namespace r = request_ranges;
  EXPECT_TRUE(r::kTemperature.Contains(0));
  EXPECT_TRUE(r::kTemperature.Contains(2));
  EXPECT_FALSE(r::kTemperature.Contains(2.01));
  EXPECT_FALSE(r::kTopP.Contains(0));
  EXPECT_TRUE(r::kTopP.Contains(1));
  EXPECT_FALSE(r::kMaxTokens.Contains(0));
}

TEST(RequestRanges, ErrorsNameTheFieldAndTheRange) {
  namespace r = request_ranges;
  EXPECT_EQ(ErrorOf(r::kTemperature, 9), "temperature: must be between 0 and 2, got 9");
  EXPECT_EQ(ErrorOf(r::kTopP, 0), "top_p: must be greater than 0 and at most 1, got 0");
  EXPECT_EQ(ErrorOf(r::kMaxTokens, -5), "max_tokens: must be between 1 and 1048576, got -5");
  EXPECT_EQ(ErrorOf(r::kTopLogprobs, 21), "top_logprobs: must be between 0 and 20, got 21");
  EXPECT_EQ(ErrorOf(r::kTemperature, 1.5), "no error");
}

}  // namespace
}  // namespace qvl
