#include "base/thread_pool.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <numeric>
#include <vector>

namespace qvl {
namespace {

TEST(ThreadPool, RunOnAllVisitsEveryThreadOnce) {
  for (int n : {1, 2, 3, 4}) {
    ThreadPool pool(n, /*pin=*/false);
    std::vector<std::atomic<int>> hits(n);
    for (int round = 0; round < 100; ++round) pool.RunOnAll([&](int t) { hits[t]++; });
    for (int t = 0; t < n; ++t) EXPECT_EQ(hits[t].load(), 100);
  }
}

TEST(ThreadPool, ParallelForCoversRangeExactlyOnce) {
  ThreadPool pool(3, /*pin=*/false);
  for (int64_t n : {0, 1, 7, 64, 1000, 12345}) {
    std::vector<std::atomic<int>> seen(n);
    pool.ParallelFor(n, 7, [&](int64_t begin, int64_t end, int thread) {
      EXPECT_GE(thread, 0);
      EXPECT_LT(thread, 3);
      for (int64_t i = begin; i < end; ++i) seen[i]++;
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << i;
  }
}

TEST(ThreadPool, ManyShortJobsAfterSleeping) {
  ThreadPool pool(2, /*pin=*/false);
  std::atomic<int64_t> sum{0};
  for (int round = 0; round < 2000; ++round) {
    pool.ParallelFor(10, 1, [&](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) sum += i;
    });
  }
  EXPECT_EQ(sum.load(), 2000 * 45);
}

TEST(ThreadPool, PinningLeavesTheCallersAffinityAlone) {
  cpu_set_t before, after;
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  {
    ThreadPool pool(2, /*pin=*/true);
    pool.RunOnAll([](int) {});
    ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&before, &after));
  }
}

}  // namespace
}  // namespace qvl
