#include "base/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include "base/cpu_features.h"
#include "base/timer.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define QVL_PAUSE() _mm_pause()
#elif defined(__aarch64__)
#define QVL_PAUSE() __asm__ __volatile__("yield")
#else
#define QVL_PAUSE() ((void)0)
#endif

namespace qvl {
namespace {

// Polls between clock reads while spinning.
constexpr int kPollsPerClockRead = 64;

// The places of a ThreadPool ticket.
uint32_t Places(uint64_t ticket) { return static_cast<uint32_t>(ticket); }

void PinTo(pthread_t thread, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(thread, sizeof(set), &set);
}

}  // namespace

int DefaultThreadCount() { return GetCpuFeatures().compute_cpus; }

ThreadPool::ThreadPool(int num_threads, bool pin) {
  num_threads_ = num_threads > 0 ? num_threads : DefaultThreadCount();
  if (num_threads_ < 1) num_threads_ = 1;
  const std::vector<int> cpus = pin ? OneCpuPerPhysicalCore() : std::vector<int>();
  const bool do_pin = pin && static_cast<int>(cpus.size()) >= num_threads_ && num_threads_ > 1;
  workers_.reserve(num_threads_ - 1);
  for (int t = 1; t < num_threads_; ++t) {
    workers_.emplace_back([this, t] { WorkerLoop(t); });
    if (do_pin) PinTo(workers_.back().native_handle(), cpus[t]);
  }
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  generation_.notify_all();
  for (std::thread& w : workers_) w.join();
}

void ThreadPool::Dispatch(JobFn fn, const void* ctx, bool claimed) {
  if (num_threads_ == 1) {
    fn(ctx, 0);
    return;
  }
  job_fn_ = fn;
  job_ctx_ = ctx;
  pending_.store(num_threads_ - 1, std::memory_order_relaxed);
  const uint32_t job = generation_.load(std::memory_order_relaxed) + 1;
  // Release: a helper that takes a place reads this job.
  ticket_.store(uint64_t{job} << 32 | static_cast<uint32_t>(num_threads_ - 1),
                std::memory_order_release);
  // Sequentially consistent with the helper's sleepers_ increment and re-check: either
  // the helper sees the new generation or this thread sees it asleep and wakes it.
  generation_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) generation_.notify_all();
  fn(ctx, 0);
  if (claimed) {
    uint64_t ticket = ticket_.load(std::memory_order_acquire);
    while (Places(ticket) > 0 && !ticket_.compare_exchange_weak(ticket, ticket - Places(ticket),
                                                                std::memory_order_acq_rel)) {
    }
    if (Places(ticket) > 0) pending_.fetch_sub(Places(ticket), std::memory_order_acq_rel);
  }
  // The caller's own share is usually the last to finish; the helpers' is at most a
  // few microseconds behind, so poll, yielding only if they were descheduled.
  for (int polls = 0; pending_.load(std::memory_order_acquire) != 0; ++polls) {
    if (polls < (1 << 16)) {
      QVL_PAUSE();
    } else {
      std::this_thread::yield();
    }
  }
}

void ThreadPool::WorkerLoop(int thread) {
  // Generation 0 is the pool's state at construction; a helper that starts late still
  // sees every job dispatched since. seen: the last job this helper ran or found done.
  uint32_t seen = 0;
  for (;;) {
    uint32_t now = generation_.load(std::memory_order_acquire);
    if (now == seen) {
      const double give_up = NowSeconds() + kSpinSeconds;
      for (int polls = 1; now == seen; ++polls) {
        QVL_PAUSE();
        now = generation_.load(std::memory_order_acquire);
        if (now != seen || polls % kPollsPerClockRead != 0 || NowSeconds() < give_up) continue;
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        while ((now = generation_.load(std::memory_order_seq_cst)) == seen) {
          generation_.wait(seen, std::memory_order_seq_cst);
        }
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
      }
    }
    if (stop_.load(std::memory_order_acquire)) return;
    // A place in the newest job, unless its caller finished it without this helper. The
    // ticket is published before the generation, so it may name a job this helper has
    // already run while the generation still lags: then it looks again.
    uint64_t ticket = ticket_.load(std::memory_order_acquire);
    for (;;) {
      const uint32_t job = static_cast<uint32_t>(ticket >> 32);
      if (static_cast<int32_t>(job - seen) <= 0) {
        QVL_PAUSE();
        break;
      }
      if (Places(ticket) == 0) {
        seen = job;
        break;
      }
      if (ticket_.compare_exchange_weak(ticket, ticket - 1, std::memory_order_acq_rel)) {
        seen = job;
        job_fn_(job_ctx_, thread);
        pending_.fetch_sub(1, std::memory_order_acq_rel);
        break;
      }
    }
  }
}

}  // namespace qvl
