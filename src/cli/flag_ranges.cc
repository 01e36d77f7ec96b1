#include "cli/flag_ranges.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
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

namespace {

// "010" -> "10", "-007" -> "-7", "+5" -> "5"; an error for anything but [+-]digits.
std::string CanonicalDecimal(std::string& text) {
  const bool signed_text = !text.empty() && (text[0] == '-' || text[0] == '+');
  const size_t digits = signed_text ? 1 : 0;
  if (text.size() == digits ||
      !std::all_of(text.begin() + static_cast<std::ptrdiff_t>(digits), text.end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return "expected a decimal integer, got " + text;
  }
  const size_t first = text.find_first_not_of('0', digits);
  if (first == std::string::npos) {
    text = "0";
  } else {
    text = (text[0] == '-' ? "-" : "") + text.substr(first);
  }
  return "";
}

}  // namespace

void ReadIntegersAsDecimal(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    // The type comes first, then the descriptions of the option's checks: "INT:...".
    const std::string type = option->get_type_name();
    const std::string base = type.substr(0, type.find(':'));
    if (base != "INT" && base != "UINT") continue;
    // A transform runs before the option's checks and its conversion.
    option->transform(CLI::Validator(CanonicalDecimal, ""));
  }
  for (CLI::App* verb : app.get_subcommands([](CLI::App*) { return true; })) {
    ReadIntegersAsDecimal(*verb);
  }
}

int CapThreads(int requested, const char* flag) {
  const CpuFeatures& f = GetCpuFeatures();
  const int cpus = f.logical_cpus;
  if (requested > cpus) {
    LogInfo(flag, " ", requested, " is more than the ", cpus,
            " CPUs this process may run on; using ", cpus);
    requested = cpus;
  }
  // A thread beyond the granted time only waits for its turn, and the others for it.
  const int granted = GrantedCpus(f);
  if (requested > granted) {
    LogInfo(flag, " ", requested, " is more than the ", f.cpu_quota,
            " CPUs' worth of time this process's control group grants; using ", granted);
    requested = granted;
  }
  return requested;
}

}  // namespace qvl::cli
