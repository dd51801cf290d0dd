#pragma once
// Thread parallelism for CPU kernels. See Note [CPU threads].

#include <algorithm>
#include <cstdint>

#include "src/backends/cpu/thread_budget.h"
#include "src/core/float_mode.h"

#ifdef _OPENMP
#include <omp.h>
#endif

// Note [CPU threads]
// Kernels split work with OpenMP, and OpenBLAS is linked in its OpenMP build, so matrix
// products and elementwise loops share one pool of threads. Two pools (PyTorch's libgomp plus
// OpenBLAS's pthreads) spin against each other on small machines; one pool cannot. Below
// kParallelBytes a kernel runs on the calling thread: waking workers costs more than a
// few hundred kilobytes of streaming work. How many threads a region uses follows the
// machine's load (Note [Thread budget]); every chunk runs under the launching thread's
// denormal mode (Note [Denormals]).

namespace locus::cpu {

/// Bytes of traffic below which a kernel stays on one thread.
inline constexpr int64_t kParallelBytes = int64_t{256} << 10;

/// The most threads a parallel region may use (sizes per-thread scratch space; a region may
/// use fewer, see threads_now()).
inline int max_threads() noexcept {
#ifdef _OPENMP
  return thread_ceiling();
#else
  return 1;
#endif
}

/// Calls f(begin, end) over [0, n) in contiguous chunks, in parallel when `parallel`.
/// Chunks are aligned to `align` elements so vector loops keep their alignment.
template <class F>
void parallel_for(int64_t n, bool parallel, F&& f, int64_t align = 64) {
  if (n <= 0) return;
#ifdef _OPENMP
  const int threads = parallel && n > align ? threads_now() : 1;
  if (threads > 1) {
    const uint32_t flush = detail::flush_bits();
#pragma omp parallel num_threads(threads)
    {
      const detail::FlushBitsScope mode(flush);
      const int64_t nt = omp_get_num_threads(), tid = omp_get_thread_num();
      int64_t chunk = (n + nt - 1) / nt;
      chunk = (chunk + align - 1) / align * align;
      const int64_t b = std::min(n, tid * chunk), e = std::min(n, b + chunk);
      if (b < e) f(b, e);
    }
    return;
  }
#endif
  (void)align;
  (void)parallel;
  f(int64_t{0}, n);
}

}  // namespace locus::cpu
