// Checks shared by the verbs' flags: a range owned elsewhere (a request field, an engine
// option) read from its owner, so that a value is refused alike by every verb and by the
// API; and the one place a thread count is resolved.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>

#include "engine/request_ranges.h"

namespace qvl::cli {

// Most compute threads a flag accepts before CapThreads (a typo guard).
inline constexpr int kMaxThreadsFlag = 4096;

// A flag checked against `range`: "FLAG: must be between A and B, got X"; NaN is refused.
CLI::Validator InRange(const ParamRange& range);

// An integer flag between `min` and `max`, checked on its text: CLI11 2.1 reads a number
// past the type's range as the type's largest value, silently (a seed of 2^64 - 1 became
// 2^63 - 1).
CLI::Validator IntegerIn(int64_t min, int64_t max);

// Makes every integer flag of `app` and of its verbs read its value as a decimal number.
// CLI11 reads integers as C's strtoll with base 0 does, so "-t 010" was 8 (octal) and
// "--port 0x1f90" 8080. Leading zeros are dropped ("010" is 10); any other text than an
// optional sign and digits is refused: "FLAG: expected a decimal integer, got TEXT".
// Run once after every verb is added.
void ReadIntegersAsDecimal(CLI::App& app);

// `requested` compute threads (0: one per physical core) lowered to the CPUs this process
// may run on and to the CPU time its control group grants (CpuFeatures::cpu_quota,
// rounded up), with one log line naming `flag` when lowered: more threads than CPUs only
// take turns at every barrier (-t 1024 made 8 tokens take 40 s).
int CapThreads(int requested, const char* flag);

}  // namespace qvl::cli
