#include "base/cgroup_cpu.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

namespace qvl {
namespace {

namespace fs = std::filesystem;

// A folder laid out like /proc/self/cgroup and /sys/fs/cgroup.
class CgroupFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/qvl_cgroup_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root = pattern;
  }
  void TearDown() override { fs::remove_all(root); }
  void Write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(root + path).parent_path());
    std::ofstream(root + path) << text;
  }
  // A cgroup v1 cpu controller folder's quota and period files.
  void WriteV1(const std::string& folder, const std::string& quota) {
    Write(folder + "/cpu.cfs_quota_us", quota + "\n");
    Write(folder + "/cpu.cfs_period_us", "100000\n");
  }
  std::string root;
};

TEST_F(CgroupFolder, V2ContainerLimit) {
  Write("/proc/self/cgroup", "0::/\n");
  Write("/sys/fs/cgroup/cpu.max", "150000 100000\n");
  EXPECT_DOUBLE_EQ(CgroupCpuQuota(root), 1.5);
}

TEST_F(CgroupFolder, V2SmallestAlongThePath) {
  Write("/proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
  Write("/sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "max 100000\n");
  Write("/sys/fs/cgroup/kubepods/pod1/cpu.max", "400000 100000\n");
  EXPECT_DOUBLE_EQ(CgroupCpuQuota(root), 4.0);
  Write("/sys/fs/cgroup/kubepods/cpu.max", "200000 100000\n");
  EXPECT_DOUBLE_EQ(CgroupCpuQuota(root), 2.0);
}

TEST_F(CgroupFolder, V2BesideV1Controllers) {
  Write("/proc/self/cgroup", "1:cpu:/\n0::/user.slice\n");
  Write("/sys/fs/cgroup/unified/user.slice/cpu.max", "50000 100000\n");
  WriteV1("/sys/fs/cgroup/cpu", "-1");
  EXPECT_DOUBLE_EQ(CgroupCpuQuota(root), 0.5);
}

// Docker on cgroup v1: the path names the host's hierarchy, the container's group is
// mounted at the top.
TEST_F(CgroupFolder, V1ContainerMountedAtTheTop) {
  Write("/proc/self/cgroup", "7:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n");
  WriteV1("/sys/fs/cgroup/cpu,cpuacct", "300000");
  EXPECT_DOUBLE_EQ(CgroupCpuQuota(root), 3.0);
}

TEST_F(CgroupFolder, NoLimit) {
  Write("/proc/self/cgroup", "4:cpu,cpuacct:/\n0::/\n");
  WriteV1("/sys/fs/cgroup/cpu,cpuacct", "-1");
  Write("/sys/fs/cgroup/cpu.max", "max 100000\n");
  EXPECT_EQ(CgroupCpuQuota(root), 0.0);
}

TEST_F(CgroupFolder, MissingOrGarbledFilesAreNoLimit) {
  EXPECT_EQ(CgroupCpuQuota(root), 0.0);  // no /proc/self/cgroup at all
  Write("/proc/self/cgroup", "garbage\n0::relative\n0::/\n");
  Write("/sys/fs/cgroup/cpu.max", "100000x 100000\n");
  EXPECT_EQ(CgroupCpuQuota(root), 0.0);
  Write("/sys/fs/cgroup/cpu.max", "100000 0\n");
  EXPECT_EQ(CgroupCpuQuota(root), 0.0);
}

// This machine's own groups: whatever they grant, never a negative or absurd figure.
TEST(CgroupCpuQuota, ThisProcess) {
  const double quota = CgroupCpuQuota();
  EXPECT_GE(quota, 0.0);
  std::cout << "cgroup CPU quota: " << quota << " (0: none)\n";
}

}  // namespace
}  // namespace qvl
