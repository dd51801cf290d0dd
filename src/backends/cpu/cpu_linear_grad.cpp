// Linear's backward besides its two products, in one pass over the output gradient: the ReLU
// mask (when the forward folded a ReLU in) and the bias gradient, the column sums of the
// masked gradient. Rows are split among threads, each summing into its own row of partial
// sums; the partial sums are added in thread order, so the result does not depend on timing.

#include <vector>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"

namespace locus::cpu {
namespace {

template <class T>
void linear_grad(const ops::LinearGradArgs& a) {
  using C = compute_t<T>;
  const T* grad = reinterpret_cast<const T*>(a.grad);
  const T* out = reinterpret_cast<const T*>(a.output);
  T* pre = reinterpret_cast<T*>(a.grad_pre);
  const int64_t n = a.n;
  const bool parallel = a.m * n * static_cast<int64_t>(sizeof(T)) * 3 >= kParallelBytes;
  const int parts = parallel ? max_threads() : 1;
  std::vector<C> partial(a.bias_grad ? static_cast<size_t>(parts * n) : 0, C(0));
  const int64_t rows_per_part = (a.m + parts - 1) / parts;
  parallel_for(parts, parallel, [&](int64_t p0, int64_t p1) {
    for (int64_t part = p0; part < p1; ++part) {
      C* __restrict sums = a.bias_grad ? partial.data() + part * n : nullptr;
      const int64_t r1 = std::min(a.m, (part + 1) * rows_per_part);
      for (int64_t r = part * rows_per_part; r < r1; ++r) {
        const T* g = grad + r * n;
        // Two branch-free loops over a row that stays in L1, so both vectorize.
        if (out) {
          const T* __restrict y = out + r * n;
          T* __restrict gp = pre + r * n;
          for (int64_t j = 0; j < n; ++j) gp[j] = static_cast<C>(y[j]) > C(0) ? g[j] : T(0);
          g = gp;
        }
        if (sums)
          for (int64_t j = 0; j < n; ++j) sums[j] += static_cast<C>(g[j]);
      }
    }
  }, 1);
  if (!a.bias_grad) return;
  T* bias_grad = reinterpret_cast<T*>(a.bias_grad);
  for (int64_t j = 0; j < n; ++j) {
    C s = partial[static_cast<size_t>(j)];
    for (int part = 1; part < parts; ++part) s += partial[static_cast<size_t>(part * n + j)];
    bias_grad[j] = static_cast<T>(s);
  }
}

}  // namespace

void linear_grad_kernel(const ops::LinearGradArgs& args) {
  LOCUS_DISPATCH_FLOATING(args.dtype, linear_grad<scalar_t>(args));
}

}  // namespace locus::cpu
