// A fixed pool of compute threads, one per physical core, the helpers pinned. The
// calling thread is worker 0, so a pool of N threads starts N-1 helpers. A decode step dispatches a
// few hundred parallel regions a few microseconds apart, so idle helpers spin for
// kSpinSeconds before they sleep on a futex, and a dispatch makes the wake-up system
// call only when a helper actually sleeps: a hot dispatch is one atomic increment and
// a cache-line handoff (see thread_pool_benchmark.cc).
//
// Thread-compatible, not thread-safe: one thread (the engine) dispatches work.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace qvl {

class ThreadPool {
 public:
  // num_threads <= 0 means one per physical core. With pin, helper i is bound to the
  // i-th allowed core (only when there are at least as many cores as threads); the
  // calling thread is left as it is, since threads it creates later (HTTP workers,
  // another pool) would inherit a pinned mask and crowd onto its core.
  explicit ThreadPool(int num_threads = 0, bool pin = true);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return num_threads_; }

  // Calls fn(thread) once on each thread, 0 <= thread < size(); returns when all are done.
  template <typename Fn>
  void RunOnAll(const Fn& fn) {
    Dispatch([](const void* ctx, int thread) { (*static_cast<const Fn*>(ctx))(thread); }, &fn);
  }

  // Covers [0, n) with chunks of `grain` items handed out dynamically:
  // fn(begin, end, thread). Chunks run in no particular order.
  template <typename Fn>
  void ParallelFor(int64_t n, int64_t grain, const Fn& fn) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    if (num_threads_ == 1 || n <= grain) {
      fn(int64_t{0}, n, 0);
      return;
    }
    std::atomic<int64_t> next{0};
    RunOnAll([&](int thread) {
      for (;;) {
        const int64_t begin = next.fetch_add(grain, std::memory_order_relaxed);
        if (begin >= n) break;
        fn(begin, begin + grain < n ? begin + grain : n, thread);
      }
    });
  }

 private:
  using JobFn = void (*)(const void* ctx, int thread);
  void Dispatch(JobFn fn, const void* ctx);
  void WorkerLoop(int thread);

  int num_threads_ = 1;
  std::vector<std::thread> workers_;
  JobFn job_fn_ = nullptr;
  const void* job_ctx_ = nullptr;
  alignas(64) std::atomic<uint32_t> generation_{0};
  alignas(64) std::atomic<int> pending_{0};
  alignas(64) std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
};

// How long an idle helper polls for the next job before it sleeps.
inline constexpr double kSpinSeconds = 300e-6;

// One per physical core among the CPUs this process may use.
int DefaultThreadCount();

}  // namespace qvl
