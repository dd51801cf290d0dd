#pragma once
// What each reduction of the op table folds, once: one functor per op, named as its OpId (Note
// [Reduce functors]). The CPU loops and the CUDA kernels both call them, so a reduction means
// the same thing on every device. This header must compile as device code: no Locus types, no
// exceptions, no std:: math.
//
// Note [Reduce functors]
// A reduction is a fold of a state over the elements of each output's slice, in any order and
// split anywhere: every functor provides
//   init()             the state of an empty slice;
//   step(s, x)         the state after one more element x (in the accumulation type A);
//   combine(s, t)      the state of two slices folded separately (associative, so threads and
//                      blocks can fold parts and merge them);
//   finish(s, p)       the result, given the parameters p.
// The state is always State<A> (two accumulators and a count), so the kernels need one
// partial-result layout and one warp shuffle for every op. A is double on the CPU and float on
// CUDA for float16/bfloat16/float32 inputs (as PyTorch's accumulation types), double for
// float64, int64 for integer and bool inputs.

#include <math.h>

#include <cstdint>
#include <type_traits>

#include "src/ops/host_device.h"

namespace locus::ops::fn {

/// The parameters a reduction's result may depend on.
struct ReduceParams {
  double p = 2;             ///< norm: the order (inf and -inf allowed, 0 counts nonzeros)
  int64_t correction = 1;   ///< var / std: the divisor is count - correction (at least 0)
};

/// A fold's running state: what `a`, `b` and `n` hold is the functor's business.
template <class A>
struct State {
  A a, b;
  int64_t n;
};

template <class A>
LOCUS_HD bool nan_of(A x) {
  if constexpr (std::is_floating_point_v<A>) return x != x;
  else return false;
}
template <class A>
LOCUS_HD A abs_of(A x) {
  if constexpr (std::is_floating_point_v<A>) return ::fabs(x);
  else if constexpr (std::is_signed_v<A>) return x < A(0) ? static_cast<A>(-x) : x;
  else return x;
}
template <class A>
LOCUS_HD A infinity_of() {
  if constexpr (std::is_floating_point_v<A>) return static_cast<A>(HUGE_VAL);
  else return A(0);
}

/// Sum and mean. The kernels run their own tuned loops for these two (wider partial sums, more
/// loads in flight); the functors say the same thing for any generic fold.
struct Sum {
  template <class A> LOCUS_HD static State<A> init() { return {A(0), A(0), 0}; }
  template <class A> LOCUS_HD static void step(State<A>& s, A x) { s.a = static_cast<A>(s.a + x); }
  template <class A> LOCUS_HD static State<A> combine(State<A> s, const State<A>& t) {
    s.a = static_cast<A>(s.a + t.a);
    return s;
  }
  template <class A> LOCUS_HD static A finish(const State<A>& s, const ReduceParams&) { return s.a; }
};
struct Mean {
  template <class A> LOCUS_HD static State<A> init() { return {A(0), A(0), 0}; }
  template <class A> LOCUS_HD static void step(State<A>& s, A x) { s.a += x, ++s.n; }
  template <class A> LOCUS_HD static State<A> combine(State<A> s, const State<A>& t) {
    s.a += t.a, s.n += t.n;
    return s;
  }
  template <class A> LOCUS_HD static A finish(const State<A>& s, const ReduceParams&) { return s.a / static_cast<A>(s.n); }
};

/// Product (int64 for integer and bool inputs, as sum).
struct Prod {
  template <class A> LOCUS_HD static State<A> init() { return {A(1), A(0), 0}; }
  template <class A> LOCUS_HD static void step(State<A>& s, A x) { s.a = static_cast<A>(s.a * x); }
  template <class A> LOCUS_HD static State<A> combine(State<A> s, const State<A>& t) {
    s.a = static_cast<A>(s.a * t.a);
    return s;
  }
  template <class A> LOCUS_HD static A finish(const State<A>& s, const ReduceParams&) { return s.a; }
};

/// Largest element, NaN if any is NaN (as PyTorch's amax). `n` counts elements so that an
/// empty slice never reaches finish (the front end refuses it).
struct Amax {
  static constexpr bool kNeedsElements = true;  ///< no identity: an empty slice is an error
  template <class A> LOCUS_HD static State<A> init() { return {A(0), A(0), 0}; }
  template <class A> LOCUS_HD static void step(State<A>& s, A x) {
    if (s.n == 0 || nan_of(x) || (!nan_of(s.a) && x > s.a)) s.a = x;
    ++s.n;
  }
  template <class A> LOCUS_HD static State<A> combine(State<A> s, const State<A>& t) {
    if (t.n == 0) return s;
    if (s.n == 0 || nan_of(t.a) || (!nan_of(s.a) && t.a > s.a)) s.a = t.a;
    s.n += t.n;
    return s;
  }
  template <class A> LOCUS_HD static A finish(const State<A>& s, const ReduceParams&) { return s.a; }
};

/// Smallest element, NaN if any is NaN (as PyTorch's amin).
struct Amin {
  static constexpr bool kNeedsElements = true;
  template <class A> LOCUS_HD static State<A> init() { return {A(0), A(0), 0}; }
  template <class A> LOCUS_HD static void step(State<A>& s, A x) {
    if (s.n == 0 || nan_of(x) || (!nan_of(s.a) && x < s.a)) s.a = x;
    ++s.n;
  }
  template <class A> LOCUS_HD static State<A> combine(State<A> s, const State<A>& t) {
    if (t.n == 0) return s;
    if (s.n == 0 || nan_of(t.a) || (!nan_of(s.a) && t.a < s.a)) s.a = t.a;
    s.n += t.n;
    return s;
  }
  template <class A> LOCUS_HD static A finish(const State<A>& s, const ReduceParams&) { return s.a; }
};

/// log(sum(exp(x))) in one pass: `a` is the largest element so far and `b` the sum of exp(x -
/// a), rescaled whenever a grows, so nothing overflows. -inf elements add nothing (an all -inf
/// or empty slice gives -inf), +inf gives +inf, NaN gives NaN.
struct Logsumexp {
  template <class A> LOCUS_HD static State<A> init() { return {-infinity_of<A>(), A(0), 0}; }
  template <class A> LOCUS_HD static void step(State<A>& s, A x) {
    if (x == -infinity_of<A>()) return;
    if (nan_of(x) || nan_of(s.a)) {
      s.a = nan_of(x) ? x : s.a;
      return;
    }
    if (x > s.a) {
      s.b = s.b * ::exp(s.a - x) + A(1);
      s.a = x;
    } else if (x == s.a) {
      s.b += A(1);
    } else {
      s.b += ::exp(x - s.a);
    }
  }
  template <class A> LOCUS_HD static State<A> combine(State<A> s, const State<A>& t) {
    if (nan_of(s.a) || nan_of(t.a)) {
      s.a = nan_of(s.a) ? s.a : t.a;
      return s;
    }
    if (t.b == A(0)) return s;
    if (s.b == A(0)) return t;
    if (t.a > s.a) s.b = t.b + s.b * ::exp(s.a - t.a), s.a = t.a;
    else if (t.a == s.a) s.b += t.b;
    else s.b += t.b * ::exp(t.a - s.a);
    return s;
  }
  template <class A> LOCUS_HD static A finish(const State<A>& s, const ReduceParams&) {
    if (nan_of(s.a)) return s.a;
    if (s.b == A(0)) return -infinity_of<A>();
    if (s.a == infinity_of<A>()) return s.a;
    return s.a + ::log(s.b);
  }
};

/// Vector p-norm: (sum |x|^p)^(1/p); max |x| for p = inf, min |x| for -inf, the count of
/// nonzeros for 0. `a` sums (or holds the extreme), `n` counts elements seen.
struct Norm {
  template <class A> LOCUS_HD static A term(A x, double p) {
    const A m = abs_of(x);
    if (p == 2) return m * m;
    if (p == 1) return m;
    if (p == 0) return m != A(0) ? A(1) : A(0);
    return static_cast<A>(::pow(m, static_cast<A>(p)));
  }
  template <class A> LOCUS_HD static void fold(State<A>& s, A v, int64_t count, double p) {
    if (count == 0) return;
    if (p == HUGE_VAL || p == -HUGE_VAL) {
      const bool take = s.n == 0 || nan_of(v) || (!nan_of(s.a) && (p > 0 ? v > s.a : v < s.a));
      if (take) s.a = v;
    } else {
      s.a += v;
    }
    s.n += count;
  }
  // The order travels in `b` (set by the kernel through init_with), so step needs no params;
  // init() is the identity of combine (n = 0), which ignores its `b`.
  template <class A> LOCUS_HD static State<A> init() { return {A(0), A(0), 0}; }
  template <class A> LOCUS_HD static State<A> init_with(const ReduceParams& p) { return {A(0), static_cast<A>(p.p), 0}; }
  template <class A> LOCUS_HD static void step(State<A>& s, A x) {
    const double p = static_cast<double>(s.b);
    fold(s, (p == HUGE_VAL || p == -HUGE_VAL) ? abs_of(x) : term(x, p), 1, p);
  }
  template <class A> LOCUS_HD static State<A> combine(State<A> s, const State<A>& t) {
    if (t.n == 0) return s;
    if (s.n == 0) return t;
    fold(s, t.a, t.n, static_cast<double>(s.b));
    return s;
  }
  template <class A> LOCUS_HD static A finish(const State<A>& s, const ReduceParams& p) {
    if (p.p == HUGE_VAL || p.p == -HUGE_VAL) return s.n == 0 ? A(p.p > 0 ? 0 : HUGE_VAL) : s.a;
    if (p.p == 1 || p.p == 0) return s.a;
    if (p.p == 2) return ::sqrt(s.a);
    return static_cast<A>(::pow(s.a, static_cast<A>(1.0 / p.p)));
  }
};

/// Welford's running mean `a` and sum of squared deviations `b` over `n` elements; two slices
/// merge with Chan's formula, so the split does not change the result beyond rounding.
struct Var {
  template <class A> LOCUS_HD static State<A> init() { return {A(0), A(0), 0}; }
  template <class A> LOCUS_HD static void step(State<A>& s, A x) {
    ++s.n;
    const A delta = x - s.a;
    s.a += delta / static_cast<A>(s.n);
    s.b += delta * (x - s.a);
  }
  template <class A> LOCUS_HD static State<A> combine(State<A> s, const State<A>& t) {
    if (t.n == 0) return s;
    if (s.n == 0) return t;
    const int64_t n = s.n + t.n;
    const A delta = t.a - s.a;
    const A frac = static_cast<A>(t.n) / static_cast<A>(n);
    s.a += delta * frac;
    s.b += t.b + delta * delta * static_cast<A>(s.n) * frac;
    s.n = n;
    return s;
  }
  template <class A> LOCUS_HD static A finish(const State<A>& s, const ReduceParams& p) {
    const int64_t divisor = s.n - p.correction > 0 ? s.n - p.correction : 0;
    return s.b / static_cast<A>(divisor);  // 0/0 = NaN for one element and correction 1, as PyTorch
  }
};

/// Standard deviation: the square root of Var's result.
struct Std {
  template <class A> LOCUS_HD static State<A> init() { return Var::init<A>(); }
  template <class A> LOCUS_HD static void step(State<A>& s, A x) { Var::step(s, x); }
  template <class A> LOCUS_HD static State<A> combine(State<A> s, const State<A>& t) { return Var::combine(s, t); }
  template <class A> LOCUS_HD static A finish(const State<A>& s, const ReduceParams& p) { return ::sqrt(Var::finish(s, p)); }
};

/// Whether any (all) elements are nonzero; NaN counts as nonzero.
struct Any {
  template <class A> LOCUS_HD static State<A> init() { return {A(0), A(0), 0}; }
  template <class A> LOCUS_HD static void step(State<A>& s, A x) {
    if (x != A(0)) s.a = A(1);
  }
  template <class A> LOCUS_HD static State<A> combine(State<A> s, const State<A>& t) {
    if (t.a != A(0)) s.a = A(1);
    return s;
  }
  template <class A> LOCUS_HD static A finish(const State<A>& s, const ReduceParams&) { return s.a; }
};
struct All {
  template <class A> LOCUS_HD static State<A> init() { return {A(1), A(0), 0}; }
  template <class A> LOCUS_HD static void step(State<A>& s, A x) {
    if (x == A(0)) s.a = A(0);
  }
  template <class A> LOCUS_HD static State<A> combine(State<A> s, const State<A>& t) {
    if (t.a == A(0)) s.a = A(0);
    return s;
  }
  template <class A> LOCUS_HD static A finish(const State<A>& s, const ReduceParams&) { return s.a; }
};

/// The number of nonzero elements.
struct CountNonzero {
  template <class A> LOCUS_HD static State<A> init() { return {A(0), A(0), 0}; }
  template <class A> LOCUS_HD static void step(State<A>& s, A x) {
    if (x != A(0)) ++s.n;
  }
  template <class A> LOCUS_HD static State<A> combine(State<A> s, const State<A>& t) {
    s.n += t.n;
    return s;
  }
  template <class A> LOCUS_HD static int64_t finish(const State<A>& s, const ReduceParams&) { return s.n; }
};

/// Whether a reduction has no identity (kNeedsElements): an empty slice is an error.
template <class F>
inline constexpr bool needs_elements_v = requires { F::kNeedsElements; };

/// The state a fold starts from: init(), or init_with(params) for a functor whose steps need
/// the parameters (norm's order).
template <class F, class A>
LOCUS_HD State<A> start(const ReduceParams& p) {
  if constexpr (requires { F::template init_with<A>(p); }) return F::template init_with<A>(p);
  else return F::template init<A>();
}

}  // namespace locus::ops::fn
