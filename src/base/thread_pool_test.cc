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

// Many small ParallelFors with a RunOnAll now and then: every item covered exactly once
// per call, and each static job run once on every thread.
void ExpectExactCoverage(ThreadPool& pool) {
  std::vector<std::atomic<int>> static_hits(pool.size());
  for (int round = 0; round < 3000; ++round) {
    const int64_t n = 1 + round % 37;
    std::vector<std::atomic<int>> hits(n);
    pool.ParallelFor(n, 1 + round % 3, [&](int64_t begin, int64_t end, int) {
      for (int64_t i = begin; i < end; ++i) hits[i]++;
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "round " << round;
    if (round % 100 == 0) pool.RunOnAll([&](int t) { static_hits[t]++; });
  }
  for (int t = 0; t < pool.size(); ++t) EXPECT_EQ(static_hits[t].load(), 30) << "thread " << t;
}

TEST(ThreadPool, EveryItemOnceWhileHelpersComeAndGo) {
  ThreadPool pool(3, /*pin=*/false);
  ExpectExactCoverage(pool);
}

// All threads on one CPU, as on a machine whose cores other programs keep busy: a helper
// often has not begun when the caller has taken every chunk, and the caller goes on
// without it; a helper that wakes late joins a later job, never one it was not counted in.
TEST(ThreadPool, EveryItemOnceWithHelpersDescheduled) {
  cpu_set_t all, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &all)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  {
    ThreadPool pool(3, /*pin=*/false);  // the helpers inherit the single CPU
    ExpectExactCoverage(pool);
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
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
