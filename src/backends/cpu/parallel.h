#pragma once
// Thread parallelism for CPU kernels. See Note [CPU threads].

#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

// Note [CPU threads]
// Kernels split work with OpenMP, and OpenBLAS is linked in its OpenMP build, so matrix
// products and elementwise loops share one pool of threads. Two pools (PyTorch's libgomp plus
// OpenBLAS's pthreads) spin against each other on small machines; one pool cannot. Below
// kParallelBytes a kernel runs on the calling thread: waking workers costs more than a
// few hundred kilobytes of streaming work.

namespace locus::cpu {

/// Bytes of traffic below which a kernel stays on one thread.
inline constexpr int64_t kParallelBytes = int64_t{256} << 10;

/// Number of worker threads kernels may use.
inline int max_threads() noexcept {
#ifdef _OPENMP
  return omp_get_max_threads();
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
  if (parallel && n > align && max_threads() > 1) {
#pragma omp parallel
    {
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
