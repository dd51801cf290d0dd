// Softmax and log-softmax, stable (max subtracted first).

#include <cmath>
#include <limits>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"

namespace locus::cpu {
namespace {

template <class T>
void softmax_typed(const ops::SoftmaxArgs& a) {
  using C = compute_t<T>;
  const T* in = reinterpret_cast<const T*>(a.in);
  T* out = reinterpret_cast<T*>(a.out);
  const int64_t dim = a.dim, inner = a.inner;
  const bool parallel = a.outer * dim * inner * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  parallel_for(a.outer * inner, parallel, [&](int64_t b, int64_t e) {
    for (int64_t oi = b; oi < e; ++oi) {
      const int64_t o = oi / inner, i = oi % inner;
      const T* x = in + o * dim * inner + i;
      T* y = out + o * dim * inner + i;
      C mx = -std::numeric_limits<C>::infinity();
      for (int64_t j = 0; j < dim; ++j) mx = std::max(mx, C(x[j * inner]));
      if (std::isinf(mx) && mx < 0) mx = 0;  // all -inf: avoid inf - inf
      double sum = 0;
      for (int64_t j = 0; j < dim; ++j) sum += std::exp(static_cast<double>(C(x[j * inner]) - mx));
      if (a.log) {
        const C lse = static_cast<C>(std::log(sum));
        for (int64_t j = 0; j < dim; ++j) y[j * inner] = static_cast<T>(C(x[j * inner]) - mx - lse);
      } else {
        const C inv = static_cast<C>(1.0 / sum);
        for (int64_t j = 0; j < dim; ++j) y[j * inner] = static_cast<T>(std::exp(C(x[j * inner]) - mx) * inv);
      }
    }
  }, 1);
}

}  // namespace

void softmax_kernel(const ops::SoftmaxArgs& args) {
  LOCUS_DISPATCH_FLOATING(args.dtype, softmax_typed<scalar_t>(args));
}

}  // namespace locus::cpu
