// Unary elementwise kernels.

#include <cmath>
#include <limits>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/loops.h"

namespace locus::cpu {
namespace {

template <class T, class F>
void run_unary(const ops::StridedIter& it, F f) {
  using C = compute_t<T>;
  for_each_run<2>(it, 2 * sizeof(T), [&](char* const* p, const int64_t* s, int64_t n) {
    auto* out = reinterpret_cast<T*>(p[0]);
    const auto* in = reinterpret_cast<const T*>(p[1]);
    if (s[0] == sizeof(T) && s[1] == sizeof(T)) {
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(f(C(in[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) = static_cast<T>(f(C(*reinterpret_cast<const T*>(p[1] + i * s[1]))));
    }
  });
}

template <class T>
void unary_typed(ops::OpId op, const ops::StridedIter& it, const Scalar& lo_s, const Scalar& hi_s, bool has_lo,
                 bool has_hi) {
  using C = compute_t<T>;
  using ops::OpId;
  switch (op) {
    case OpId::Neg:
      if constexpr (!std::is_same_v<T, bool>) {
        run_unary<T>(it, [](C x) { return static_cast<C>(-x); });
        return;
      }
      break;
    case OpId::Abs:
      if constexpr (std::is_unsigned_v<C>) run_unary<T>(it, [](C x) { return x; });
      else run_unary<T>(it, [](C x) { return x < 0 ? static_cast<C>(-x) : x; });
      return;
    case OpId::Relu:
      // NaN propagates: the comparison is false for NaN, so it is kept.
      run_unary<T>(it, [](C x) { return x < C(0) ? C(0) : x; });
      return;
    case OpId::Clamp: {
      const C lo = lo_s.to<C>(), hi = hi_s.to<C>();
      if (has_lo && has_hi) run_unary<T>(it, [lo, hi](C x) { return x < lo ? lo : (x > hi ? hi : x); });
      else if (has_lo) run_unary<T>(it, [lo](C x) { return x < lo ? lo : x; });
      else run_unary<T>(it, [hi](C x) { return x > hi ? hi : x; });
      return;
    }
    default: break;
  }
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case OpId::Exp: run_unary<T>(it, [](C x) { return std::exp(x); }); return;
      case OpId::Log: run_unary<T>(it, [](C x) { return std::log(x); }); return;
      case OpId::Sqrt: run_unary<T>(it, [](C x) { return std::sqrt(x); }); return;
      case OpId::Tanh: run_unary<T>(it, [](C x) { return std::tanh(x); }); return;
      case OpId::Sigmoid: run_unary<T>(it, [](C x) { return C(1) / (C(1) + std::exp(-x)); }); return;
      case OpId::Gelu:
        run_unary<T>(it, [](C x) { return C(0.5) * x * (C(1) + std::erf(x * C(0.70710678118654752440))); });
        return;
      default: break;
    }
  }
  throw DTypeError("internal: no CPU unary kernel for this op and dtype");
}

}  // namespace

void unary_kernel(ops::OpId op, const ops::StridedIter& it, const Scalar& lo, const Scalar& hi, bool has_lo,
                  bool has_hi) {
  LOCUS_DISPATCH_ALL(it.dtypes[0], unary_typed<scalar_t>(op, it, lo, hi, has_lo, has_hi));
}

}  // namespace locus::cpu
