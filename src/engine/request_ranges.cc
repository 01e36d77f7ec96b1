#include "engine/request_ranges.h"

#include <cstdint>

#include "base/field_error.h"

namespace qvl {
namespace {

// 1048576 rather than 1.04858e+06.
std::string FormatBound(double value) {
  const auto whole = static_cast<int64_t>(value);
  return static_cast<double>(whole) == value ? std::to_string(whole) : StrCat(value);
}

}  // namespace

std::string ParamRange::Describe() const {
  return min_exclusive
             ? StrCat("greater than ", FormatBound(min), " and at most ", FormatBound(max))
             : StrCat("between ", FormatBound(min), " and ", FormatBound(max));
}

void CheckTokenId(std::string_view field, int64_t id, int64_t vocab) {
  if (id < 0 || id >= vocab) {
    FailField(ErrorCode::kInvalidArgument, field, "token id ", id,
              " is not in the vocabulary (0 to ", vocab - 1, ")");
  }
}

void CheckInRange(const ParamRange& range, double value) {
  if (!range.Contains(value)) {
    FailField(ErrorCode::kInvalidArgument, range.name, "must be ", range.Describe(), ", got ",
              value);
  }
}

}  // namespace qvl
