// Tests only: resident bytes of this process's memory mappings, as /proc/self/smaps
// counts them, for checking what a mapping keeps in memory.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <fstream>
#include <functional>
#include <string>

namespace qvl {

// Resident bytes of the mappings whose smaps header line ("start-end perms offset dev
// inode path") `match` accepts.
inline size_t MappedRss(const std::function<bool(const std::string& header)>& match) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_mapping = false;
  size_t rss = 0;
  while (std::getline(smaps, line)) {
    if (std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') < 20 &&
        line.find(':') > 20) {
      in_mapping = match(line);
    } else if (in_mapping && line.rfind("Rss:", 0) == 0) {
      rss += std::stoull(line.substr(4)) * 1024;
    }
  }
  return rss;
}

// Resident bytes of the mapping that starts at `start`.
inline size_t MappedRssAt(const void* start) {
  bool found = false;
  const size_t rss = MappedRss([&](const std::string& header) {
    const bool here = std::stoull(header.substr(0, header.find('-')), nullptr, 16) ==
                      reinterpret_cast<uintptr_t>(start);
    found |= here;
    return here;
  });
  if (!found) ADD_FAILURE() << "no mapping at " << start << " in /proc/self/smaps";
  return rss;
}

// Resident bytes of every mapping of the file at `path` (an absolute path).
inline size_t MappedRssOf(const std::string& path) {
  return MappedRss([&](const std::string& header) { return header.ends_with(" " + path); });
}

}  // namespace qvl
