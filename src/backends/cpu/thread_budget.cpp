// The thread budget of CPU kernels (Note [Thread budget]) and locus::set_num_threads.

#include "src/backends/cpu/thread_budget.h"

#include <cblas.h>
#include <fcntl.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "locus/errors.h"
#include "locus/threads.h"

namespace locus::cpu {
namespace {

constexpr int64_t kSamplePeriodNs = 10'000'000;
constexpr int kSamplesToLower = 2;
constexpr int kSamplesToRaise = 5;

int64_t coarse_now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);  // vDSO: a few nanoseconds, jiffy resolution
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int initial_ceiling() noexcept {
#ifdef _OPENMP
  return std::max(1, omp_get_max_threads());  // OMP_NUM_THREADS, else the usable cores
#else
  return 1;
#endif
}

class Budget {
 public:
  Budget()
      : ceiling_(initial_ceiling()), now_(ceiling_.load()), cpus_(std::max(1, get_nprocs())),
        log_(std::getenv("LOCUS_LOG_THREADS") != nullptr) {
    // Read once per 10 ms by one thread; kept open so a sample is one pread.
    loadavg_ = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (loadavg_ < 0) next_sample_ns_ = INT64_MAX;
  }
  ~Budget() {
    if (loadavg_ >= 0) ::close(loadavg_);
  }

  int ceiling() const noexcept { return ceiling_.load(std::memory_order_relaxed); }

  void set_ceiling(int n) {
    std::lock_guard lock(sample_mutex_);
    ceiling_.store(n, std::memory_order_relaxed);
    publish(n);
    down_ = up_ = 0;
  }

  int now() noexcept {
    const int64_t t = coarse_now_ns();
    if (t >= next_sample_ns_.load(std::memory_order_relaxed)) sample(t);
    return now_.load(std::memory_order_relaxed);
  }

 private:
  void sample(int64_t t) noexcept {
    std::unique_lock lock(sample_mutex_, std::try_to_lock);
    if (!lock.owns_lock() || t < next_sample_ns_.load(std::memory_order_relaxed)) return;
    next_sample_ns_.store(t + kSamplePeriodNs, std::memory_order_relaxed);
    const int runnable = read_runnable();
    if (runnable < 0) {
      next_sample_ns_.store(INT64_MAX, std::memory_order_relaxed);  // no /proc: stay at the ceiling
      return;
    }
    const int current = now_.load(std::memory_order_relaxed);
    const int next = next_thread_budget(runnable, cpus_, current, ceiling(), down_, up_);
    if (next != current) {
      if (log_)
        std::fprintf(stderr, "locus: CPU threads %d -> %d (%d runnable threads on %d cores)\n", current, next, runnable,
                     cpus_);
      publish(next);
    }
  }

  void publish(int n) noexcept {
    now_.store(n, std::memory_order_relaxed);
    // OpenBLAS's OpenMP build follows omp_get_max_threads() at each call, except that once its
    // own count is 1 it stops asking; setting it here lets it come back up.
    openblas_set_num_threads(n);
  }

  // The runnable threads on the machine ("0.52 0.58 0.59 3/412 12345": 3), or -1.
  int read_runnable() const noexcept {
    char buf[128];
    const ssize_t got = ::pread(loadavg_, buf, sizeof buf - 1, 0);
    if (got <= 0) return -1;
    buf[got] = '\0';
    const char* p = buf;
    for (int field = 0; field < 3; ++field) {
      while (*p && *p != ' ') ++p;
      while (*p == ' ') ++p;
    }
    char* end = nullptr;
    const long runnable = std::strtol(p, &end, 10);
    if (end == p || *end != '/' || runnable < 0 || runnable > INT_MAX) return -1;
    return static_cast<int>(runnable);
  }

  std::atomic<int> ceiling_;
  std::atomic<int> now_;
  std::atomic<int64_t> next_sample_ns_{0};
  const int cpus_;
  const bool log_;  // LOCUS_LOG_THREADS: each change of the budget on stderr
  int loadavg_ = -1;
  std::mutex sample_mutex_;
  int down_ = 0, up_ = 0;  // guarded by sample_mutex_
};

Budget& budget() {
  static Budget b;
  return b;
}

}  // namespace

int next_thread_budget(int runnable, int cpus, int current, int ceiling, int& down, int& up) noexcept {
  // Locus's own team counts as runnable: between regions its workers spin, and the sampling
  // thread is running. What is left over belongs to others.
  const int others = std::max(0, runnable - current);
  const int wanted = std::clamp(cpus - others, 1, std::max(1, ceiling));
  if (current > ceiling) {
    down = up = 0;
    return wanted;
  }
  if (wanted < current) {
    up = 0;
    if (++down < kSamplesToLower) return current;
  } else if (wanted > current) {
    down = 0;
    if (++up < kSamplesToRaise) return current;
  }
  down = up = 0;
  return wanted;
}

int thread_ceiling() noexcept { return budget().ceiling(); }

int threads_now() noexcept {
  const int n = budget().now();
#ifdef _OPENMP
  // Each thread has its own OpenMP setting; bring the caller's to the budget so OpenBLAS and
  // oneDNN, which read it, use the same team size.
  if (!omp_in_parallel() && omp_get_max_threads() != n) omp_set_num_threads(n);
#endif
  return n;
}

}  // namespace locus::cpu

namespace locus {

void set_num_threads(int n) {
  if (n < 1) throw ValueError("set_num_threads: the number of threads must be at least 1, got " + std::to_string(n));
  cpu::budget().set_ceiling(n);
}

int get_num_threads() noexcept { return cpu::thread_ceiling(); }

}  // namespace locus
