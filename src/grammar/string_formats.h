// JSON Schema "format" values as patterns: date, time, date-time (RFC 3339), uuid,
// email, uri, ipv4, hostname. Unknown formats are refused rather than ignored.
#pragma once

#include <optional>
#include <string_view>

namespace qvl::grammar {

// The anchored pattern a value of `format` matches, or nullopt for an unknown format.
std::optional<std::string_view> FormatPattern(std::string_view format);

}  // namespace qvl::grammar
