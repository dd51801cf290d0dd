// Binary elementwise kernels: arithmetic, maximum/minimum, pow and comparisons.

#include <cmath>
#include <type_traits>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/loops.h"

namespace locus::cpu {
namespace {

template <class C>
C int_pow(C base, C exp) {
  if (exp < 0) return base == 1 ? 1 : (base == -1 ? ((exp & 1) ? -1 : 1) : 0);
  C result = 1;
  while (exp) {
    if (exp & 1) result *= base;
    base *= base;
    exp >>= 1;
  }
  return result;
}

// One functor per op, in the compute type C; comparisons return bool.
template <class C>
struct BinaryFns {
  static C add(C a, C b) {
    if constexpr (std::is_same_v<C, bool>) return a || b;
    else return a + b;
  }
  static C sub(C a, C b) { return static_cast<C>(a - b); }
  static C mul(C a, C b) {
    if constexpr (std::is_same_v<C, bool>) return a && b;
    else return a * b;
  }
  static C div(C a, C b) { return a / b; }
  static C pow(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) return std::pow(a, b);
    else if constexpr (std::is_same_v<C, bool>) return a || !b;
    else return int_pow(a, b);
  }
  static C maximum(C a, C b) {
    if constexpr (std::is_floating_point_v<C>)
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
    return a > b ? a : b;
  }
  static C minimum(C a, C b) {
    if constexpr (std::is_floating_point_v<C>)
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
    return a < b ? a : b;
  }
};

// The row loop: a contiguous fast path the compiler vectorises, a broadcast-scalar path, and
// the general strided path.
template <class T, class Out, class F>
inline void binary_row(char* const* p, const int64_t* s, int64_t n, F f) {
  using C = compute_t<T>;
  auto* out = reinterpret_cast<Out*>(p[0]);
  const auto* a = reinterpret_cast<const T*>(p[1]);
  const auto* b = reinterpret_cast<const T*>(p[2]);
  if (s[0] == sizeof(Out) && s[1] == sizeof(T) && s[2] == sizeof(T)) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(f(C(a[i]), C(b[i])));
  } else if (s[0] == sizeof(Out) && s[1] == sizeof(T) && s[2] == 0) {
    const C bv = C(b[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(f(C(a[i]), bv));
  } else if (s[0] == sizeof(Out) && s[1] == 0 && s[2] == sizeof(T)) {
    const C av = C(a[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(f(av, C(b[i])));
  } else {
    for (int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<Out*>(p[0] + i * s[0]) = static_cast<Out>(
          f(C(*reinterpret_cast<const T*>(p[1] + i * s[1])), C(*reinterpret_cast<const T*>(p[2] + i * s[2]))));
    }
  }
}

template <class T, class Out, class F>
void run_binary(const ops::StridedIter& it, F f) {
  for_each_run<3>(it, static_cast<int64_t>(sizeof(Out) + 2 * sizeof(T)),
                  [&](char* const* p, const int64_t* s, int64_t n) { binary_row<T, Out>(p, s, n, f); });
}

template <class T>
void binary_typed(ops::OpId op, const ops::StridedIter& it, const Scalar& alpha) {
  using C = compute_t<T>;
  using Fn = BinaryFns<C>;
  using ops::OpId;
  const bool unit_alpha = alpha.to_double() == 1.0;
  const C al = alpha.to<C>();
  switch (op) {
    case OpId::Add:
      if (unit_alpha) run_binary<T, T>(it, [](C a, C b) { return Fn::add(a, b); });
      else run_binary<T, T>(it, [al](C a, C b) { return Fn::add(a, static_cast<C>(Fn::mul(al, b))); });
      return;
    case OpId::Sub:
      if constexpr (!std::is_same_v<T, bool>) {
        if (unit_alpha) run_binary<T, T>(it, [](C a, C b) { return Fn::sub(a, b); });
        else run_binary<T, T>(it, [al](C a, C b) { return static_cast<C>(a - al * b); });
        return;
      }
      break;
    case OpId::Mul: run_binary<T, T>(it, [](C a, C b) { return Fn::mul(a, b); }); return;
    case OpId::Div:
      if constexpr (is_float_v<T>) {
        run_binary<T, T>(it, [](C a, C b) { return Fn::div(a, b); });
        return;
      }
      break;
    case OpId::Pow: run_binary<T, T>(it, [](C a, C b) { return Fn::pow(a, b); }); return;
    case OpId::Maximum: run_binary<T, T>(it, [](C a, C b) { return Fn::maximum(a, b); }); return;
    case OpId::Minimum: run_binary<T, T>(it, [](C a, C b) { return Fn::minimum(a, b); }); return;
    case OpId::Eq: run_binary<T, bool>(it, [](C a, C b) { return a == b; }); return;
    case OpId::Ne: run_binary<T, bool>(it, [](C a, C b) { return a != b; }); return;
    case OpId::Lt: run_binary<T, bool>(it, [](C a, C b) { return a < b; }); return;
    case OpId::Le: run_binary<T, bool>(it, [](C a, C b) { return a <= b; }); return;
    case OpId::Gt: run_binary<T, bool>(it, [](C a, C b) { return a > b; }); return;
    case OpId::Ge: run_binary<T, bool>(it, [](C a, C b) { return a >= b; }); return;
    default: break;
  }
  throw DTypeError("internal: no CPU binary kernel for this op and dtype");
}

}  // namespace

void binary_kernel(ops::OpId op, const ops::StridedIter& it, const Scalar& alpha) {
  LOCUS_DISPATCH_ALL(it.dtypes[1], binary_typed<scalar_t>(op, it, alpha));
}

// A scalar operand becomes a zero-stride third operand: one loop serves both forms.
void binary_scalar_kernel(ops::OpId op, const ops::StridedIter& it, const Scalar& b, const Scalar& alpha) {
  LOCUS_DISPATCH_ALL(it.dtypes[1], {
    scalar_t value = b.to<scalar_t>();
    ops::StridedIter full = it;
    full.noperands = 3;
    full.data[2] = reinterpret_cast<char*>(&value);
    full.dtypes[2] = it.dtypes[1];
    full.strides[2] = Shape(it.shape.size(), 0);
    binary_typed<scalar_t>(op, full, alpha);
  });
}

}  // namespace locus::cpu
