// Memory the process uses, as the kernel counts it (/proc/self/status).
#pragma once

#include <cstdint>

namespace qvl {

// Resident set size now (VmRSS), in bytes; 0 where unavailable.
int64_t CurrentRssBytes();

// Highest resident set size so far (VmHWM), in bytes; 0 where unavailable.
int64_t PeakRssBytes();

}  // namespace qvl
