// cross_entropy with class targets on the CPU (and sim), forward and backward one pass each
// over the logits: a row's maximum, its log-sum-exp and the loss in one sweep, the targets
// checked on the way (no one-hot mask, no separate reductions), and the gradient
// softmax - one_hot written straight from the saved log-sum-exp.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"

namespace locus::cpu {
namespace {

// Rows go to threads in blocks of this many (a row is usually short: classes).
constexpr int64_t kRowAlign = 8;

template <class T>
void cross_entropy(const ops::CrossEntropyArgs& a) {
  using C = compute_t<T>;
  const T* logits = reinterpret_cast<const T*>(a.logits);
  T* losses = reinterpret_cast<T*>(a.losses);
  C* lse_out = reinterpret_cast<C*>(a.lse);
  std::atomic<int64_t> first_bad{std::numeric_limits<int64_t>::max()};
  std::atomic<int64_t> counted{0};
  const bool parallel = a.m * a.c * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  parallel_for(a.m, parallel, [&](int64_t r0, int64_t r1) {
    int64_t bad = std::numeric_limits<int64_t>::max(), count = 0;
    for (int64_t r = r0; r < r1; ++r) {
      const T* x = logits + r * a.c;
      const int64_t t = a.target[r];
      C mx = -std::numeric_limits<C>::infinity();
      for (int64_t j = 0; j < a.c; ++j) mx = std::max(mx, static_cast<C>(x[j]));
      // A row of -inf (or an empty class dim) has no finite maximum to shift by.
      const C shift = std::isfinite(mx) ? mx : C(0);
      C sum = 0;
      for (int64_t j = 0; j < a.c; ++j) sum += std::exp(static_cast<C>(x[j]) - shift);
      const C lse = shift + std::log(sum);
      lse_out[r] = lse;
      if (t == a.ignore) {
        losses[r] = T(0);
        continue;
      }
      if (t < 0 || t >= a.c) {
        bad = std::min(bad, r);
        losses[r] = T(0);
        continue;
      }
      ++count;
      losses[r] = static_cast<T>(lse - static_cast<C>(x[t]));
    }
    counted.fetch_add(count, std::memory_order_relaxed);
    int64_t seen = first_bad.load(std::memory_order_relaxed);
    while (bad < seen && !first_bad.compare_exchange_weak(seen, bad, std::memory_order_relaxed)) {
    }
  }, kRowAlign);
  if (first_bad.load() != std::numeric_limits<int64_t>::max()) *a.bad_target = first_bad.load();
  *a.counted = counted.load();
}

template <class T>
void cross_entropy_grad(const ops::CrossEntropyGradArgs& a) {
  using C = compute_t<T>;
  const T* logits = reinterpret_cast<const T*>(a.logits);
  const C* lse = reinterpret_cast<const C*>(a.lse);
  const T* scale = reinterpret_cast<const T*>(a.scale);
  T* grad = reinterpret_cast<T*>(a.grad_logits);
  const bool parallel = a.m * a.c * static_cast<int64_t>(sizeof(T)) * 2 >= kParallelBytes;
  parallel_for(a.m, parallel, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* x = logits + r * a.c;
      T* gr = grad + r * a.c;
      const int64_t t = a.target[r];
      if (t == a.ignore || t < 0 || t >= a.c) {
        std::fill(gr, gr + a.c, T(0));
        continue;
      }
      const C s = static_cast<C>(scale[r * a.scale_stride]), l = lse[r];
      for (int64_t j = 0; j < a.c; ++j) gr[j] = static_cast<T>(s * std::exp(static_cast<C>(x[j]) - l));
      gr[t] = static_cast<T>(s * (std::exp(static_cast<C>(x[t]) - l) - C(1)));
    }
  }, kRowAlign);
}

}  // namespace

void cross_entropy_kernel(const ops::CrossEntropyArgs& args) {
  LOCUS_DISPATCH_FLOATING(args.dtype, cross_entropy<scalar_t>(args));
}

void cross_entropy_grad_kernel(const ops::CrossEntropyGradArgs& args) {
  LOCUS_DISPATCH_FLOATING(args.dtype, cross_entropy_grad<scalar_t>(args));
}

}  // namespace locus::cpu
