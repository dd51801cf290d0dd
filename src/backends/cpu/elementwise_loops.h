#pragma once
// The CPU elementwise loops: one for unary ops and one for binary ops, instantiated with each
// op's functor (src/ops/functors.h) for the dtypes its rule allows, so the compiler inlines the
// functor and vectorises the contiguous paths. The instantiations are spread over
// cpu_unary_kernels.cpp, cpu_binary_kernels.cpp and cpu_elementwise.cpp, so that a build on two
// cores compiles them side by side: in one file they were the longest compile of the library.
//
// Note [Vectorised GELU]
// GELU and its gradient in float32 take vec_math.h's row functions on contiguous runs instead of
// the functor: the functor's erf and exp are libm calls the compiler leaves scalar, and they were
// a fifth of the transformer's training step. The row functions compute the functor's formula
// with PyTorch's vectorised erf (Abramowitz and Stegun 7.1.26, absolute error below 1.5e-7), as
// PyTorch's own CPU kernel does; float64, other layouts and CUDA keep the functor. sigmoid and
// tanh in float32 do the same with vec_math.h's rows (Note [Vectorised sigmoid and tanh]).

#include <type_traits>

#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/loops.h"
#include "src/backends/cpu/streaming_store.h"
#include "src/backends/cpu/vec_math.h"
#include "src/ops/dtype_rules.h"
#include "src/ops/functors.h"
#include "src/ops/kernel_table.h"

namespace locus::cpu::elementwise {

using ops::DtypeRule;
namespace fn = ops::fn;

// The functor's parameters in its compute type; the extended ones only for the functors that
// read them (fn::uses_extra_params_v).
template <class C, bool kExtra>
fn::Params<C> params_of(const ops::ElementwiseScalars& s) {
  fn::Params<C> p;
  p.alpha = s.alpha.to<C>();
  p.lo = s.lo.to<C>(), p.hi = s.hi.to<C>();
  p.has_lo = s.has_lo, p.has_hi = s.has_hi;
  if constexpr (kExtra) {
    p.beta = s.beta.to<C>(), p.threshold = s.threshold.to<C>();
    p.nan = s.nan.to<C>(), p.posinf = s.posinf.to<C>(), p.neginf = s.neginf.to<C>();
  }
  return p;
}

template <class F, class T>
void unary_typed(const ops::StridedIter& it, const ops::ElementwiseScalars& s) {
  using C = compute_t<T>;
  using Out = std::conditional_t<std::is_same_v<decltype(F{}(C{}, fn::Params<C>{})), bool>, bool, T>;
  const fn::Params<C> p = params_of<C, fn::uses_extra_params_v<F>>(s);
  const F f{};
  const bool stream = streams_output(it);
  for_each_run<2>(it, static_cast<int64_t>(sizeof(Out) + sizeof(T)), [&](char* const* ptr, const int64_t* st, int64_t n) {
    const fn::Params<C> q = p;  // a local the stores cannot alias (see binary_row)
    auto* out = reinterpret_cast<Out*>(ptr[0]);
    const auto* in = reinterpret_cast<const T*>(ptr[1]);
    if (st[0] == sizeof(Out) && st[1] == sizeof(T)) {
      write_run(out, n, stream, [&](Out* dst, int64_t first, int64_t count) {
        const T* src = in + first;
        if constexpr (std::is_same_v<F, fn::Gelu> && std::is_same_v<T, float>) {
          gelu_row(src, dst, count);  // Note [Vectorised GELU]
        } else if constexpr (std::is_same_v<F, fn::Sigmoid> && std::is_same_v<T, float>) {
          sigmoid_row(src, dst, count);  // Note [Vectorised sigmoid and tanh]
        } else if constexpr (std::is_same_v<F, fn::Tanh> && std::is_same_v<T, float>) {
          tanh_row(src, dst, count);  // Note [Vectorised sigmoid and tanh]
        } else {
          for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<Out>(f(C(src[i]), q));
        }
      });
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(ptr[0] + i * st[0]) = static_cast<Out>(f(C(*reinterpret_cast<const T*>(ptr[1] + i * st[1])), q));
    }
  });
}

// The row loop: a contiguous path the compiler vectorises, two broadcast-scalar paths, and the
// general strided path.
template <class T, class Out, class F, class P>
inline void binary_row(char* const* ptr, const int64_t* st, int64_t n, const F& f, const P params, bool stream) {
  // `params` is a copy on purpose: a local the stores cannot alias, so its loads leave the loops.
  const P& p = params;
  using C = compute_t<T>;
  auto* out = reinterpret_cast<Out*>(ptr[0]);
  const auto* a = reinterpret_cast<const T*>(ptr[1]);
  const auto* b = reinterpret_cast<const T*>(ptr[2]);
  if (st[0] == sizeof(Out) && st[1] == sizeof(T) && st[2] == sizeof(T)) {
    write_run(out, n, stream, [&](Out* dst, int64_t first, int64_t count) {
      const T* x = a + first;
      const T* y = b + first;
      if constexpr (std::is_same_v<F, fn::GeluBackward> && std::is_same_v<T, float>) {
        gelu_backward_row(x, y, dst, count);  // Note [Vectorised GELU]
      } else {
        for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<Out>(f(C(x[i]), C(y[i]), p));
      }
    });
  } else if (st[0] == sizeof(Out) && st[1] == sizeof(T) && st[2] == 0) {
    const C bv = C(b[0]);
    write_run(out, n, stream, [&](Out* dst, int64_t first, int64_t count) {
      const T* x = a + first;
      for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<Out>(f(C(x[i]), bv, p));
    });
  } else if (st[0] == sizeof(Out) && st[1] == 0 && st[2] == sizeof(T)) {
    const C av = C(a[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Out>(f(av, C(b[i]), p));
  } else {
    for (int64_t i = 0; i < n; ++i)
      *reinterpret_cast<Out*>(ptr[0] + i * st[0]) = static_cast<Out>(
          f(C(*reinterpret_cast<const T*>(ptr[1] + i * st[1])), C(*reinterpret_cast<const T*>(ptr[2] + i * st[2])), p));
  }
}

template <class F, class T>
void binary_typed(const ops::StridedIter& it, const ops::ElementwiseScalars& s) {
  using C = compute_t<T>;
  using Out = std::conditional_t<std::is_same_v<decltype(F{}(C{}, C{}, fn::Params<C>{})), bool>, bool, T>;
  const fn::Params<C> p = params_of<C, fn::uses_extra_params_v<F>>(s);
  const F f{};
  // A number operand (below) has stride 0: the output streams when it alone is large.
  const bool stream = streams_output(it);
  auto rows = [&](char* const* ptr, const int64_t* st, int64_t n) { binary_row<T, Out>(ptr, st, n, f, p, stream); };
  const auto bytes = static_cast<int64_t>(sizeof(Out) + 2 * sizeof(T));
  if (!s.has_other) {
    for_each_run<3>(it, bytes, rows);
    return;
  }
  // A number operand becomes a zero-stride third operand: one loop serves both forms.
  T value = s.other.to<T>();
  ops::StridedIter full = it;
  full.noperands = 3;
  full.data[2] = reinterpret_cast<char*>(&value);
  full.dtypes[2] = it.dtypes[1];
  full.strides[2] = Shape(it.shape.size(), 0);
  for_each_run<3>(full, bytes, rows);
}

[[noreturn]] inline void no_kernel() { throw DTypeError("internal: an elementwise kernel was called with a dtype its rule excludes"); }

template <class F, DtypeRule R>
void unary_kernel(const ops::StridedIter& it, const ops::ElementwiseScalars& s) {
  LOCUS_DISPATCH_ALL(it.dtypes[1], {
    if constexpr (ops::rule_allows(R, dtype_of<scalar_t>())) unary_typed<F, scalar_t>(it, s);
    else no_kernel();
  });
}

template <class F, DtypeRule R>
void binary_kernel(const ops::StridedIter& it, const ops::ElementwiseScalars& s) {
  LOCUS_DISPATCH_ALL(it.dtypes[1], {
    if constexpr (ops::rule_allows(R, dtype_of<scalar_t>())) binary_typed<F, scalar_t>(it, s);
    else no_kernel();
  });
}

// The table entries of one op list (op_table.h), each pointing at its op's instantiation.
#define LOCUS_CPU_UNARY_ENTRY(id, name, rule, ...)                      \
  table.elementwise[static_cast<int>(ops::OpId::id)] = &::locus::cpu::elementwise::unary_kernel<ops::fn::id, ops::DtypeRule::rule>;
#define LOCUS_CPU_BINARY_ENTRY(id, name, rule, ...)                     \
  table.elementwise[static_cast<int>(ops::OpId::id)] = &::locus::cpu::elementwise::binary_kernel<ops::fn::id, ops::DtypeRule::rule>;

/// The entries of LOCUS_PLAIN_UNARY_OPS (cpu_unary_kernels.cpp).
void fill_plain_unary_kernels(ops::KernelTable& table);
/// The entries of LOCUS_PLAIN_BINARY_OPS (cpu_binary_kernels.cpp).
void fill_plain_binary_kernels(ops::KernelTable& table);

}  // namespace locus::cpu::elementwise
