// Sizes in messages a person reads: "512 bytes", "3 KiB", "32 MiB", "1.5 MiB".
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace qvl {

inline std::string FormatByteSize(int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  const bool mib = bytes >= (int64_t{1} << 20);
  const double value = static_cast<double>(bytes) / (mib ? 1 << 20 : 1 << 10);
  char text[32];
  std::snprintf(text, sizeof(text), "%.*f %s", value == static_cast<int64_t>(value) ? 0 : 1, value,
                mib ? "MiB" : "KiB");
  return text;
}

}  // namespace qvl
