// Reductions: sum and mean over any set of dims (tuned loops), every other reduction of the op
// table as a fold of its functor (Note [Reduce functors]); max, min, argmax and argmin along one
// dim or all.

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "locus/errors.h"
#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"
#include "src/core/public_op.h"
#include "src/ops/reduce_rules.h"

namespace locus::cpu {
namespace {

template <class T>
using acc_t = std::conditional_t<is_float_v<T>, double, int64_t>;

// The type of the short-block partials in sum_run: floats keep their compute type (the vector
// width matters and a block is short), integers and bool add in int64 from the first element.
// (Narrow lanes once summed bool and 8-bit tensors modulo 256: ones(4096, kBool).sum() was 16.)
template <class T>
using lane_t = std::conditional_t<is_float_v<T>, compute_t<T>, int64_t>;

// Sum of a strided run, with independent lanes so the compiler vectorises without having to
// reorder a single floating-point chain.
template <class T>
acc_t<T> sum_run(const char* p, int64_t stride, int64_t n) {
  using A = acc_t<T>;
  using C = compute_t<T>;
  using L = lane_t<T>;
  if (stride == sizeof(T)) {
    const T* x = reinterpret_cast<const T*>(p);
    constexpr int kLanes = 16;
    L lanes[kLanes] = {};
    int64_t i = 0;
    // Float partials over short blocks keep the vector width; blocks fold into A exactly enough
    // (error grows with the block length 16*kBlock, not with n).
    A total = 0;
    constexpr int64_t kBlock = 256;
    for (; i + kLanes * kBlock <= n; i += kLanes * kBlock) {
      for (int64_t b = 0; b < kBlock; ++b)
        for (int j = 0; j < kLanes; ++j) lanes[j] += static_cast<L>(C(x[i + b * kLanes + j]));
      for (int j = 0; j < kLanes; ++j) {
        total += static_cast<A>(lanes[j]);
        lanes[j] = L(0);
      }
    }
    for (; i < n; ++i) total += static_cast<A>(C(x[i]));
    return total;
  }
  A total = 0;
  for (int64_t i = 0; i < n; ++i) total += static_cast<A>(compute_t<T>(*reinterpret_cast<const T*>(p + i * stride)));
  return total;
}

// Calls visit(row start, output offset) for the rows [begin, end) of the input
// (every dim but the innermost), in memory order.
template <class Visit>
void for_each_row(const ops::ReduceArgs& a, int64_t begin, int64_t end, Visit&& visit) {
  const int nd = static_cast<int>(a.shape.size());
  int64_t idx[64];
  int64_t rem = begin;
  for (int d = nd - 2; d >= 0; --d) {
    idx[d] = rem % a.shape[d];
    rem /= a.shape[d];
  }
  for (int64_t row = begin; row < end; ++row) {
    const char* p = a.in;
    int64_t o = 0;
    for (int d = 0; d < nd - 1; ++d) {
      p += idx[d] * a.in_strides[d];
      o += idx[d] * a.out_strides[d];
    }
    visit(p, o);
    for (int d = nd - 2; d >= 0; --d) {
      if (++idx[d] < a.shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Walks the input in memory order: runs along the innermost dim either fold into one output
// (innermost dim reduced) or add elementwise into a row of outputs (innermost dim kept).
template <class T>
void accumulate_range(const ops::ReduceArgs& a, acc_t<T>* acc, int64_t begin, int64_t end) {
  const int nd = static_cast<int>(a.shape.size());
  const int64_t inner = a.shape[nd - 1];
  const int64_t in_inner = a.in_strides[nd - 1];
  const int64_t out_inner = a.out_strides[nd - 1];  // in acc elements
  for_each_row(a, begin, end, [&](const char* p, int64_t o) {
    if (out_inner == 0) {
      acc[o] += sum_run<T>(p, in_inner, inner);
    } else {
      for (int64_t i = 0; i < inner; ++i)
        acc[o + i * out_inner] += static_cast<acc_t<T>>(compute_t<T>(*reinterpret_cast<const T*>(p + i * in_inner)));
    }
  });
}

template <class T>
void sum_typed(const ops::ReduceArgs& a) {
  using A = acc_t<T>;
  const int nd = static_cast<int>(a.shape.size());
  const int64_t numel = a.shape.numel();
  std::vector<A> acc(static_cast<size_t>(a.out_numel), A(0));
  // An empty input sums to 0 and means to 0/0 = NaN; nothing below may divide by its count.
  if (numel == 0) {
  } else if (nd == 0) {
    acc[0] = static_cast<A>(compute_t<T>(*reinterpret_cast<const T*>(a.in)));
  } else {
    const int64_t rows = numel / a.shape[nd - 1];
    const int nt = max_threads();
    const bool parallel = numel * static_cast<int64_t>(sizeof(T)) >= kParallelBytes && nt > 1 &&
                          a.out_numel * 64 <= numel;
    if (parallel && rows >= nt) {
      // Per-thread partial outputs, summed at the end: no shared writes in the hot loop.
      std::vector<std::vector<A>> partial(nt, std::vector<A>(static_cast<size_t>(a.out_numel), A(0)));
      parallel_for(rows, true, [&](int64_t b, int64_t e) {
#ifdef _OPENMP
        accumulate_range<T>(a, partial[omp_get_thread_num()].data(), b, e);
#else
        accumulate_range<T>(a, partial[0].data(), b, e);
#endif
      }, 1);
      for (auto& p : partial)
        for (size_t i = 0; i < acc.size(); ++i) acc[i] += p[i];
    } else if (parallel && a.out_numel == 1 && nd == 1) {
      // One long contiguous run (a full reduction): split the run itself.
      std::vector<A> partial(nt, A(0));
      parallel_for(numel, true, [&](int64_t b, int64_t e) {
#ifdef _OPENMP
        partial[omp_get_thread_num()] = sum_run<T>(a.in + b * a.in_strides[0], a.in_strides[0], e - b);
#else
        partial[0] = sum_run<T>(a.in + b * a.in_strides[0], a.in_strides[0], e - b);
#endif
      });
      for (A v : partial) acc[0] += v;
    } else {
      accumulate_range<T>(a, acc.data(), 0, rows);
    }
  }
  const bool mean = a.op == ops::OpId::Mean;
  LOCUS_DISPATCH_ALL(a.out_dtype, {
    auto* out = reinterpret_cast<scalar_t*>(a.out);
    for (int64_t i = 0; i < a.out_numel; ++i) {
      if (mean) out[i] = static_cast<scalar_t>(a.reduce_numel == 0 ? std::numeric_limits<double>::quiet_NaN()
                                                                     : static_cast<double>(acc[i]) / static_cast<double>(a.reduce_numel));
      else if constexpr (std::is_same_v<scalar_t, bool>) out[i] = acc[i] != A(0);
      else out[i] = static_cast<scalar_t>(acc[i]);
    }
  });
}

// ---- the other reductions: folds of their functors --------------------------------------

// Folds the rows [begin, end) of the input (every dim but the innermost) into `states`, one per
// output, walking memory in order as accumulate_range does.
template <class F, class T>
void fold_range(const ops::ReduceArgs& a, ops::fn::State<acc_t<T>>* states, int64_t begin, int64_t end) {
  using A = acc_t<T>;
  const int nd = static_cast<int>(a.shape.size());
  const int64_t inner = a.shape[nd - 1];
  const int64_t in_inner = a.in_strides[nd - 1];
  const int64_t out_inner = a.out_strides[nd - 1];
  for_each_row(a, begin, end, [&](const char* p, int64_t o) {
    for (int64_t i = 0; i < inner; ++i)
      F::step(states[o + i * out_inner], static_cast<A>(compute_t<T>(*reinterpret_cast<const T*>(p + i * in_inner))));
  });
}

template <class F, class T>
void fold_typed(const ops::ReduceArgs& a) {
  using A = acc_t<T>;
  using S = ops::fn::State<A>;
  const int nd = static_cast<int>(a.shape.size());
  const int64_t numel = a.shape.numel();
  const S start = ops::fn::start<F, A>(a.params);
  std::vector<S> states(static_cast<size_t>(a.out_numel), start);
  if (numel > 0) {
    const int64_t rows = numel / a.shape[nd - 1];
    const int nt = max_threads();
    const bool parallel = numel * static_cast<int64_t>(sizeof(T)) >= kParallelBytes && nt > 1;
    if (parallel && rows == a.out_numel && a.out_strides[nd - 1] == 0) {
      // Each output is one run of the innermost dim: threads take whole outputs (rows).
      parallel_for(rows, true, [&](int64_t b, int64_t e) { fold_range<F, T>(a, states.data(), b, e); }, 1);
    } else if (parallel && rows >= nt) {
      // Per-thread partial states, combined in thread order: no shared writes in the loop.
      std::vector<std::vector<S>> partial(static_cast<size_t>(nt), std::vector<S>(states.size(), start));
      parallel_for(rows, true, [&](int64_t b, int64_t e) {
#ifdef _OPENMP
        fold_range<F, T>(a, partial[static_cast<size_t>(omp_get_thread_num())].data(), b, e);
#else
        fold_range<F, T>(a, partial[0].data(), b, e);
#endif
      }, 1);
      for (const auto& p : partial)
        for (size_t i = 0; i < states.size(); ++i) states[i] = F::combine(states[i], p[i]);
    } else {
      fold_range<F, T>(a, states.data(), 0, rows);
    }
  }
  LOCUS_DISPATCH_ALL(a.out_dtype, {
    auto* out = reinterpret_cast<scalar_t*>(a.out);
    for (int64_t i = 0; i < a.out_numel; ++i) {
      const auto v = F::finish(states[static_cast<size_t>(i)], a.params);
      if constexpr (std::is_same_v<scalar_t, bool>) out[i] = v != decltype(v)(0);
      else out[i] = static_cast<scalar_t>(v);
    }
  });
}

// The fold of `F` for the input dtypes its rule lets reach a kernel (reduce_kernel_takes), so
// the others are never instantiated; sum and mean run their tuned loops.
template <class F, ops::ReduceRule kRule>
void fold(const ops::ReduceArgs& a) {
  if constexpr (std::is_same_v<F, ops::fn::Sum> || std::is_same_v<F, ops::fn::Mean>) {
    LOCUS_DISPATCH_ALL(a.in_dtype, sum_typed<scalar_t>(a));
  } else {
    LOCUS_DISPATCH_ALL(a.in_dtype, {
      if constexpr (ops::reduce_kernel_takes(kRule, dtype_of<scalar_t>())) fold_typed<F, scalar_t>(a);
      else throw ValueError(detail::error_prefix(ops::op_name(a.op)) + "no kernel for dtype " + std::string(dtype_name(a.in_dtype)));
    });
  }
}

template <class C>
bool better(ops::OpId op, C v, C best) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(best)) return false;
    if (std::isnan(v)) return true;
  }
  return op == ops::OpId::Min ? v < best : v > best;
}

// Max / Min / Argmax / Argmin over the middle dim of a contiguous [outer, dim, inner] input.
template <class T>
void extreme_typed(const ops::ReduceArgs& a) {
  using C = compute_t<T>;
  const int64_t outer = a.shape[0], dim = a.shape[1], inner = a.shape[2];
  if (outer * inner == 0) return;
  if (dim == 0) throw ValueError(detail::error_prefix(ops::op_name(a.op)) + "reduction over an empty dim");
  const T* in = reinterpret_cast<const T*>(a.in);
  const bool arg = a.op == ops::OpId::Argmax || a.op == ops::OpId::Argmin;
  const ops::OpId cmp = a.op == ops::OpId::Argmax ? ops::OpId::Max : a.op == ops::OpId::Argmin ? ops::OpId::Min : a.op;
  auto* idx_out = reinterpret_cast<int64_t*>(arg ? a.out : a.indices);
  T* val_out = arg ? nullptr : reinterpret_cast<T*>(a.out);
  const bool parallel = outer * dim * inner * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  parallel_for(outer * inner, parallel, [&](int64_t b, int64_t e) {
    for (int64_t oi = b; oi < e; ++oi) {
      const int64_t o = oi / inner, i = oi % inner;
      const T* base = in + o * dim * inner + i;
      C best = C(base[0]);
      int64_t best_j = 0;
      for (int64_t j = 1; j < dim; ++j) {
        const C v = C(base[j * inner]);
        if (better<C>(cmp, v, best)) {
          best = v;
          best_j = j;
        }
      }
      if (val_out) val_out[oi] = static_cast<T>(best);
      if (idx_out) idx_out[oi] = best_j;
    }
  }, 1);
}

}  // namespace

void reduce_kernel(const ops::ReduceArgs& args) {
  switch (args.op) {
#define LOCUS_FOLD_CASE(id, name, rule, ...) \
  case ops::OpId::id: fold<ops::fn::id, ops::ReduceRule::rule>(args); return;
    LOCUS_REDUCE_OPS(LOCUS_FOLD_CASE)
#undef LOCUS_FOLD_CASE
    default: LOCUS_DISPATCH_ALL(args.in_dtype, extreme_typed<scalar_t>(args));
  }
}

}  // namespace locus::cpu
