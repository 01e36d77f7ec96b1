// A fixed pool of compute threads, one per physical core, the helpers pinned. The
// calling thread is worker 0, so a pool of N threads starts N-1 helpers. A decode step dispatches a
// few hundred parallel regions a few microseconds apart, so idle helpers spin for
// kSpinSeconds before they sleep on a futex, and a dispatch makes the wake-up system
// call only when a helper actually sleeps: a hot dispatch is one atomic increment and
// a cache-line handoff (see thread_pool_benchmark.cc). A ParallelFor does not wait for a
// helper that has not begun when the caller runs out of chunks: on a machine whose cores
// other programs also use, a descheduled helper would otherwise hold up every region
// until the kernel ran it again.
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
    Dispatch([](const void* ctx, int thread) { (*static_cast<const Fn*>(ctx))(thread); }, &fn,
             /*claimed=*/false);
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
    const auto run = [&](int thread) {
      for (;;) {
        const int64_t begin = next.fetch_add(grain, std::memory_order_relaxed);
        if (begin >= n) break;
        fn(begin, begin + grain < n ? begin + grain : n, thread);
      }
    };
    Dispatch([](const void* ctx, int thread) { (*static_cast<decltype(run)*>(ctx))(thread); }, &run,
             /*claimed=*/true);
  }

 private:
  using JobFn = void (*)(const void* ctx, int thread);
  // Runs fn on every thread. claimed: the job's work is claimed by whoever runs it, so
  // once the caller's own call returns, the helpers that have not begun may skip it.
  void Dispatch(JobFn fn, const void* ctx, bool claimed);
  void WorkerLoop(int thread);

  int num_threads_ = 1;
  std::vector<std::thread> workers_;
  JobFn job_fn_ = nullptr;
  const void* job_ctx_ = nullptr;
  alignas(64) std::atomic<uint32_t> generation_{0};
  alignas(64) std::atomic<int> pending_{0};
  // The current job's generation (high half) and its places not yet taken (low half):
  // a helper takes a place before it runs the job, and the caller of a claimed job
  // takes back the places left when its own call returns.
  alignas(64) std::atomic<uint64_t> ticket_{0};
  alignas(64) std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
};

// How long an idle helper polls for the next job before it sleeps.
inline constexpr double kSpinSeconds = 300e-6;

// One per physical core among the CPUs this process may use, at most the CPU time its
// control group grants (CpuFeatures::compute_cpus).
int DefaultThreadCount();

}  // namespace qvl
