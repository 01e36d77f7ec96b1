#include "base/cgroup_cpu.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace qvl {
namespace {

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// A positive finite number spelled out in full, else 0.
double Positive(const std::string& text) {
  if (text.empty()) return 0.0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && v > 0.0 && v < 1e18 ? v : 0.0;
}

// Calls visit(folder) for the group at `path` under `mount` and each of its ancestors.
template <typename Visit>
void ForLevels(const std::string& mount, std::string path, const Visit& visit) {
  if (path.empty() || path.front() != '/') return;
  for (;;) {
    visit(mount + path);
    if (path == "/") return;
    const size_t slash = path.find_last_of('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
}

// quota / period in CPUs, 0 unless both are positive numbers.
double Ratio(const std::string& quota, const std::string& period) {
  const double q = Positive(quota), p = Positive(period);
  return q > 0.0 && p > 0.0 ? q / p : 0.0;
}

// cgroup v2: "max 100000" (none) or "150000 100000".
double QuotaV2(const std::string& folder) {
  std::istringstream fields(FirstLine(folder + "/cpu.max"));
  std::string quota, period;
  fields >> quota >> period;
  return Ratio(quota, period);
}

// cgroup v1: cpu.cfs_quota_us is -1 for none.
double QuotaV1(const std::string& folder) {
  return Ratio(FirstLine(folder + "/cpu.cfs_quota_us"), FirstLine(folder + "/cpu.cfs_period_us"));
}

}  // namespace

double CgroupCpuQuota(const std::string& root) {
  double smallest = 0.0;
  const auto take = [&](double quota) {
    if (quota > 0.0 && (smallest == 0.0 || quota < smallest)) smallest = quota;
  };
  // Lines "hierarchy:controllers:path"; cgroup v2's is "0::path".
  std::ifstream groups(root + "/proc/self/cgroup");
  for (std::string line; std::getline(groups, line);) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    const std::string sys = root + "/sys/fs/cgroup";
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {
      // Unified alone, or beside v1 controllers (systemd's hybrid layout).
      for (const std::string& mount : {sys, sys + "/unified"}) {
        ForLevels(mount, path, [&](const std::string& folder) { take(QuotaV2(folder)); });
      }
      continue;
    }
    std::istringstream list(controllers);
    bool cpu = false;
    for (std::string name; std::getline(list, name, ',');) cpu = cpu || name == "cpu";
    if (!cpu) continue;
    // Mounted under the joined controller names ("cpu,cpuacct"), often also as "cpu".
    for (const std::string& mount : {sys + "/" + controllers, sys + "/cpu"}) {
      ForLevels(mount, path, [&](const std::string& folder) { take(QuotaV1(folder)); });
    }
  }
  return smallest;
}

}  // namespace qvl
