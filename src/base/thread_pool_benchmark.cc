// Cost of a parallel region: a decode step issues a few hundred, so the dispatch must
// stay in the low microseconds. Measures an empty RunOnAll while the helpers are hot, a
// ParallelFor of tiny chunks, and a dispatch after the helpers went to sleep.
//   ./thread_pool_benchmark [--benchmark_filter=Hot]
#include <benchmark/benchmark.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "base/thread_pool.h"

namespace qvl {
namespace {

void BM_HotDispatch(benchmark::State& state) {
  ThreadPool pool(static_cast<int>(state.range(0)));
  std::atomic<int> sink{0};
  for (auto _ : state) pool.RunOnAll([&](int t) { sink.fetch_add(t, std::memory_order_relaxed); });
  benchmark::DoNotOptimize(sink.load());
}
BENCHMARK(BM_HotDispatch)->Arg(2)->UseRealTime();

void BM_ParallelForTinyChunks(benchmark::State& state) {
  ThreadPool pool(2);
  std::atomic<int64_t> sink{0};
  for (auto _ : state) {
    pool.ParallelFor(64, 1, [&](int64_t b, int64_t e, int) {
      sink.fetch_add(e - b, std::memory_order_relaxed);
    });
  }
  benchmark::DoNotOptimize(sink.load());
}
BENCHMARK(BM_ParallelForTinyChunks)->UseRealTime();

// The pool confined to one CPU, as when other programs keep the cores busy: a dispatch
// cannot wait for a helper the kernel has not run. A ParallelFor of 64 small chunks.
void BM_ParallelForOneCpu(benchmark::State& state) {
  cpu_set_t all, one;
  sched_getaffinity(0, sizeof(all), &all);
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE && CPU_COUNT(&one) == 0; ++cpu) {
    if (CPU_ISSET(cpu, &all)) CPU_SET(cpu, &one);
  }
  sched_setaffinity(0, sizeof(one), &one);
  {
    ThreadPool pool(2, /*pin=*/false);
    std::atomic<int64_t> sink{0};
    for (auto _ : state) {
      pool.ParallelFor(64, 1, [&](int64_t b, int64_t e, int) {
        int64_t x = 0;
        for (int64_t i = 0; i < 200; ++i) x += i * (b + e);
        sink.fetch_add(x, std::memory_order_relaxed);
      });
    }
    benchmark::DoNotOptimize(sink.load());
  }
  sched_setaffinity(0, sizeof(all), &all);
}
BENCHMARK(BM_ParallelForOneCpu)->UseRealTime();

// Dispatches after the helpers have slept (idle well past the spin window): the cost of
// a futex wake-up, as for the first op of a request on an idle server.
void BM_ColdDispatch(benchmark::State& state) {
  ThreadPool pool(2);
  std::atomic<int> sink{0};
  for (auto _ : state) {
    state.PauseTiming();
    std::this_thread::sleep_for(
        std::chrono::microseconds(static_cast<int>(3 * kSpinSeconds * 1e6)));
    state.ResumeTiming();
    pool.RunOnAll([&](int t) { sink.fetch_add(t, std::memory_order_relaxed); });
  }
  benchmark::DoNotOptimize(sink.load());
}
BENCHMARK(BM_ColdDispatch)->Iterations(200)->UseRealTime();

}  // namespace
}  // namespace qvl

BENCHMARK_MAIN();
