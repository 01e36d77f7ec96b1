#include "base/process_memory.h"

#include <cstdio>
#include <cstring>

namespace qvl {
namespace {

// The "kB" value of one field of /proc/self/status.
int64_t StatusField(const char* field) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  int64_t kb = 0;
  const size_t len = std::strlen(field);
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, field, len) == 0 && line[len] == ':') {
      long long v = 0;
      if (std::sscanf(line + len + 1, "%lld", &v) == 1) kb = v;
      break;
    }
  }
  std::fclose(f);
  return kb * 1024;
}

}  // namespace

int64_t CurrentRssBytes() { return StatusField("VmRSS"); }
int64_t PeakRssBytes() { return StatusField("VmHWM"); }

}  // namespace qvl
