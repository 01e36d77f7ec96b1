#include "cli/flag_ranges.h"

#include <charconv>
#include <string>
#include <system_error>

#include "base/cpu_features.h"
#include "base/error.h"
#include "base/log.h"

namespace qvl::cli {

CLI::Validator InRange(const ParamRange& range) {
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        double value = 0;
        try {
          value = std::stod(text);
        } catch (const std::exception&) {
          return "expected a number, got " + text;
        }
        return range.Contains(value) ? "" : StrCat("must be ", range.Describe(), ", got ", text);
      },
      range.Describe());
}

CLI::Validator IntegerIn(int64_t min, int64_t max) {
  const std::string range = StrCat("an integer between ", min, " and ", max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        int64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (error == std::errc() && stop == end && value >= min && value <= max) return "";
        return StrCat("must be ", range, ", got ", text);
      },
      range);
}

int CapThreads(int requested, const char* flag) {
  const int cpus = GetCpuFeatures().logical_cpus;
  if (requested <= cpus) return requested;
  LogInfo(flag, " ", requested, " is more than the ", cpus, " CPUs this process may run on; using ",
          cpus);
  return cpus;
}

}  // namespace qvl::cli
