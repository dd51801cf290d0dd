// GradScaler's unscale on the CPU (and sim): each gradient read once, multiplied by the inverse
// scale and checked for inf/NaN in the same pass.

#include <atomic>
#include <cmath>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"

namespace locus::cpu {
namespace {

// Returns whether [begin, end) of `p` held an inf or NaN. The check is a sum of v * 0, which is
// NaN exactly when some v is not finite: no branch in the loop. (Never build this file with
// -ffast-math: it would fold v * 0 to 0.)
template <class T>
bool unscale_range(T* p, int64_t begin, int64_t end, compute_t<T> inv_scale) {
  compute_t<T> poison = 0;
  for (int64_t i = begin; i < end; ++i) {
    const compute_t<T> v = static_cast<compute_t<T>>(p[i]);
    poison += v * compute_t<T>(0);
    p[i] = static_cast<T>(v * inv_scale);
  }
  return std::isnan(poison);
}

}  // namespace

void unscale_kernel(const ops::UnscaleArgs& a) {
  std::atomic<bool> found{false};
  LOCUS_DISPATCH_FLOATING(a.dtype, {
    const auto inv = static_cast<compute_t<scalar_t>>(a.inv_scale);
    for (int k = 0; k < a.count; ++k) {
      auto* p = reinterpret_cast<scalar_t*>(a.data[k]);
      const int64_t n = a.numel[k];
      parallel_for(n, n * static_cast<int64_t>(sizeof(scalar_t)) * 2 >= kParallelBytes, [&](int64_t b, int64_t e) {
        if (unscale_range(p, b, e, inv)) found.store(true, std::memory_order_relaxed);
      });
    }
  });
  if (found.load()) *a.found_inf = 1.0f;
}

}  // namespace locus::cpu
