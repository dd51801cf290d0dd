// SGD, Adam and AdamW on the CPU (and sim): every parameter of one dtype in one parallel pass,
// each element of parameter, gradient and state read and written once, where the composed form
// runs up to ten elementwise ops per parameter (PyTorch's fused/foreach optimizers). The work is
// split by elements over all parameters together, so a model of many small tensors pays one
// parallel region, not one per tensor.
//
// The arithmetic is the composed form's, op by op, in the compute type, with each intermediate
// rounded to the parameter's dtype where the composed ops would store it (a no-op for float32
// and float64), so both forms agree.

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"

namespace locus::cpu {
namespace {

// Rounds `x` to T and back: what storing an intermediate tensor of dtype T does.
template <class T>
compute_t<T> stored(compute_t<T> x) {
  return static_cast<compute_t<T>>(static_cast<T>(x));
}

// Calls f(std::bool_constant<flag>) so that a loop inside f is compiled without the test.
template <class F>
void with_flag(bool flag, F&& f) {
  if (flag) f(std::true_type{});
  else f(std::false_type{});
}

template <class T>
void sgd_range(const ops::OptimizerStepArgs& a, int t, int64_t begin, int64_t end) {
  using C = compute_t<T>;
  T* __restrict p = reinterpret_cast<T*>(a.params[t]);
  const T* __restrict g = reinterpret_cast<const T*>(a.grads[t]);
  T* __restrict buf = a.state1 ? reinterpret_cast<T*>(a.state1[t]) : nullptr;
  const bool fresh = a.fresh && a.fresh[t], nesterov = a.nesterov;
  const C wd = static_cast<C>(a.weight_decay), mom = static_cast<C>(a.momentum);
  const C keep = static_cast<C>(1 - a.dampening), neg_lr = static_cast<C>(-a.lr);
  with_flag(a.weight_decay != 0, [&](auto decay) {
    with_flag(buf != nullptr, [&](auto momentum) {
      for (int64_t i = begin; i < end; ++i) {
        C d = static_cast<C>(g[i]);
        const C pv = static_cast<C>(p[i]);
        if constexpr (decltype(decay)::value) d = stored<T>(d + wd * pv);
        if constexpr (decltype(momentum)::value) {
          const C b = fresh ? d : stored<T>(stored<T>(static_cast<C>(buf[i]) * mom) + keep * d);
          buf[i] = static_cast<T>(b);
          d = nesterov ? stored<T>(d + mom * b) : b;
        }
        p[i] = static_cast<T>(pv + neg_lr * d);
      }
    });
  });
}

template <class T>
void adam_range(const ops::OptimizerStepArgs& a, int t, int64_t begin, int64_t end) {
  using C = compute_t<T>;
  T* __restrict p = reinterpret_cast<T*>(a.params[t]);
  const T* __restrict g = reinterpret_cast<const T*>(a.grads[t]);
  T* __restrict m1 = reinterpret_cast<T*>(a.state1[t]);
  T* __restrict m2 = reinterpret_cast<T*>(a.state2[t]);
  const bool decoupled = a.kind == ops::OptimizerKind::AdamW;
  const C wd = static_cast<C>(a.weight_decay), shrink = static_cast<C>(1 - a.lr * a.weight_decay);
  const C b1 = static_cast<C>(a.beta1), b2 = static_cast<C>(a.beta2);
  const C keep1 = static_cast<C>(1 - a.beta1), keep2 = static_cast<C>(1 - a.beta2);
  const C sqrt_c2 = static_cast<C>(std::sqrt(a.bias_correction2)), eps = static_cast<C>(a.eps);
  const C step = static_cast<C>(a.lr / a.bias_correction1);
  with_flag(a.weight_decay != 0, [&](auto decay) {
    for (int64_t i = begin; i < end; ++i) {
      C gv = static_cast<C>(g[i]);
      C pv = static_cast<C>(p[i]);
      if constexpr (decltype(decay)::value) {
        if (decoupled) pv = stored<T>(pv * shrink);
        else gv = stored<T>(gv + wd * pv);
      }
      const C m = stored<T>(stored<T>(static_cast<C>(m1[i]) * b1) + keep1 * gv);
      const C v = stored<T>(stored<T>(static_cast<C>(m2[i]) * b2) + keep2 * stored<T>(gv * gv));
      m1[i] = static_cast<T>(m);
      m2[i] = static_cast<T>(v);
      const C denom = stored<T>(stored<T>(stored<T>(std::sqrt(v)) / sqrt_c2) + eps);
      p[i] = static_cast<T>(pv - step * stored<T>(m / denom));
    }
  });
}

template <class T>
void optimizer_step(const ops::OptimizerStepArgs& a) {
  // Element offsets of each tensor in the concatenation of all of them.
  std::vector<int64_t> start(static_cast<size_t>(a.count) + 1, 0);
  for (int t = 0; t < a.count; ++t) start[t + 1] = start[t] + a.numel[t];
  const int64_t total = start.back();
  const int64_t bytes_per_element = static_cast<int64_t>(sizeof(T)) * (a.kind == ops::OptimizerKind::Sgd ? 4 : 7);
  parallel_for(total, total * bytes_per_element >= kParallelBytes, [&](int64_t begin, int64_t end) {
    int t = static_cast<int>(std::upper_bound(start.begin(), start.end(), begin) - start.begin()) - 1;
    for (; t < a.count && start[t] < end; ++t) {
      const int64_t b = std::max(begin, start[t]) - start[t], e = std::min(end, start[t + 1]) - start[t];
      if (b >= e) continue;
      if (a.kind == ops::OptimizerKind::Sgd) sgd_range<T>(a, t, b, e);
      else adam_range<T>(a, t, b, e);
    }
  });
}

}  // namespace

void optimizer_step_kernel(const ops::OptimizerStepArgs& args) {
  LOCUS_DISPATCH_FLOATING(args.dtype, optimizer_step<scalar_t>(args));
}

}  // namespace locus::cpu
