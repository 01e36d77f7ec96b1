// The CPU time a container or systemd slice grants this process. `docker run --cpus=4`,
// a Kubernetes CPU limit or systemd's CPUQuota= leave every core of the host visible
// (sched_getaffinity lists them all) and throttle the process once its threads have used
// their share of each period: one compute thread per visible core would spend most of a
// period throttled, and the rest spinning for threads that are.
#pragma once

#include <string>

namespace qvl {

// The smallest quota / period along this process's control group path, in CPUs (1.5 for
// 150 ms per 100 ms): cgroup v2's cpu.max, cgroup v1's cpu.cfs_quota_us and
// cpu.cfs_period_us. 0 when none is set or none can be read. Levels of the path that do
// not exist are skipped: inside a container the path may name the host's hierarchy while
// the container's own group is mounted at the top. `root` is prepended to /proc and /sys
// (tests lay out a folder like them).
double CgroupCpuQuota(const std::string& root = "");

}  // namespace qvl
