#include "grammar/string_formats.h"

#include <array>
#include <utility>

namespace qvl::grammar {

#define QVL_DATE                                                                                   \
  "[0-9]{4}-(((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01]))|((0[469]|11)-(0[1-9]|[12][0-9]|30))|(02-" \
  "(0[1-9]|1[0-9]|2[0-9])))"
#define QVL_TIME \
  "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
#define QVL_LABEL "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"

std::optional<std::string_view> FormatPattern(std::string_view format) {
  // Stricter than the RFCs where that keeps the grammar small (February has 29 days in
  // every year, leap seconds are out): a generated value always validates.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kFormats = {{
      {"date", "^" QVL_DATE "$"},
      {"time", "^" QVL_TIME "$"},
      {"date-time", "^" QVL_DATE "T" QVL_TIME "$"},
      {"uuid", "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"},
      {"email", "^[A-Za-z0-9_%+-]+(\\.[A-Za-z0-9_%+-]+)*@" QVL_LABEL "(\\." QVL_LABEL ")+$"},
      {"uri", "^[A-Za-z][A-Za-z0-9+.-]*:(%[0-9A-Fa-f]{2}|[A-Za-z0-9._~:/?#@!$&'()*+,;=-])+$"},
      {"ipv4",
       "^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-"
       "9]?[0-9])$"},
      {"hostname", "^" QVL_LABEL "(\\." QVL_LABEL ")*$"},
  }};
  for (const auto& [name, pattern] : kFormats) {
    if (name == format) return pattern;
  }
  return std::nullopt;
}

#undef QVL_DATE
#undef QVL_TIME
#undef QVL_LABEL

}  // namespace qvl::grammar
