#pragma once
// What each elementwise op computes, once: one functor per op, named as its OpId (Note [Op
// table]). The CPU loops call them, and nvcc compiles the same functors into the CUDA kernels,
// so an op means the same thing on every device. A functor works in the compute type C (float
// for the 16-bit floats, the type itself otherwise) and takes the op's scalar parameters last.
// This header must compile as device code: no Locus types, no exceptions, no std:: math.

#include <math.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "src/ops/host_device.h"

namespace locus::ops::fn {

/// The scalar parameters an elementwise op may take, in its compute type (ElementwiseScalars
/// in src/ops/kernel_table.h says which op reads which).
template <class C>
struct Params {
  C alpha = C(1);       ///< add / sub: a + alpha * b; elu's alpha; leaky_relu's negative_slope
  C lo = C(0), hi = C(0);  ///< clamp and hardtanh bounds, valid where has_lo / has_hi
  bool has_lo = false, has_hi = false;
  C beta = C(1), threshold = C(20);  ///< softplus; elu's output scale is beta (selu)
  C nan = C(0), posinf = C(0), neginf = C(0);  ///< nan_to_num's replacements
};

template <class C>
inline constexpr bool is_real_v = std::is_floating_point_v<C>;
template <class C>
inline constexpr bool is_bool_v = std::is_same_v<C, bool>;

/// Whether a functor reads Params' extended fields (beta, threshold, nan, posinf, neginf), so
/// the CPU loops convert those Scalars only for the ops that use them (they cost ~40
/// instructions per call of every other op).
template <class F>
inline constexpr bool uses_extra_params_v = requires { F::kExtraParams; };

// ---- helpers ------------------------------------------------------------------------------

/// Integer division that cannot trap: 0 for a zero divisor (the CPU front end raises first;
/// CUDA has no way to) and wrapping negation for MIN / -1.
template <class C>
LOCUS_HD C int_div(C a, C b) {
  if (b == 0) return C(0);
  if constexpr (std::is_signed_v<C>)
    if (b == C(-1)) return static_cast<C>(0 - static_cast<std::make_unsigned_t<C>>(a));
  return static_cast<C>(a / b);
}
template <class C>
LOCUS_HD C int_mod(C a, C b) {
  if (b == 0) return C(0);
  if constexpr (std::is_signed_v<C>)
    if (b == C(-1)) return C(0);
  return static_cast<C>(a % b);
}

/// base ** exp, wrapping as PyTorch's integer pow does: the products run in the unsigned type
/// (where wrapping is defined), so no intermediate square overflows a signed type.
template <class C>
LOCUS_HD C int_pow(C base, C exp) {
  if constexpr (std::is_signed_v<C>)
    if (exp < 0) return base == C(1) ? C(1) : (base == C(-1) ? ((exp & 1) ? C(-1) : C(1)) : C(0));
  using U = std::make_unsigned_t<std::common_type_t<C, unsigned>>;
  U result = 1, b = static_cast<U>(base);
  for (U e = static_cast<U>(exp); e; e >>= 1) {
    if (e & 1u) result *= b;
    b *= b;
  }
  return static_cast<C>(result);
}

template <class C>
LOCUS_HD bool is_nan(C x) {
  if constexpr (is_real_v<C>) return x != x;
  else return false;
}
/// +-inf (INFINITY is a constant expression on the host and the device alike).
template <class C>
LOCUS_HD bool is_inf(C x) {
  if constexpr (is_real_v<C>) return x == C(INFINITY) || x == C(-INFINITY);
  else return false;
}
/// min(max(x + 3, 0), 6), NaN kept (both comparisons are false for it), as PyTorch's
/// hardsigmoid and hardswish.
template <class C>
LOCUS_HD C relu6_of_shifted(C x) {
  C t = x + C(3);
  if (t < C(0)) t = C(0);
  if (t > C(6)) t = C(6);
  return t;
}

// ---- unary --------------------------------------------------------------------------------

struct Neg {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return static_cast<C>(-x); }
};
/// |x|; for floats the sign bit is cleared, so abs(-0.0) is +0.0 (IEEE 754, as PyTorch).
struct Abs {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const {
    if constexpr (std::is_unsigned_v<C>) return x;
    else if constexpr (is_real_v<C>) return ::fabs(x);
    else return x < C(0) ? static_cast<C>(-x) : x;
  }
};
/// -1, 0 or 1 (0 for NaN, as PyTorch); a bool is its own sign.
struct Sign {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const {
    if constexpr (is_bool_v<C> || std::is_unsigned_v<C>) return static_cast<C>(x > C(0));
    else return static_cast<C>((C(0) < x) - (x < C(0)));
  }
};
struct Exp {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::exp(x); }
};
struct Expm1 {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::expm1(x); }
};
struct Log {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::log(x); }
};
struct Log1p {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::log1p(x); }
};
struct Sqrt {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::sqrt(x); }
};
struct Rsqrt {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return C(1) / ::sqrt(x); }
};
struct Sin {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::sin(x); }
};
struct Cos {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::cos(x); }
};
struct Tanh {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::tanh(x); }
};
struct Sigmoid {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return C(1) / (C(1) + ::exp(-x)); }
};
struct Erf {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::erf(x); }
};
/// max(x, 0), keeping NaN (the comparison is false for it).
struct Relu {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const {
    if constexpr (std::is_unsigned_v<C>) return x;
    else return x < C(0) ? C(0) : x;
  }
};
/// x * Phi(x), the exact (erf) form.
struct Gelu {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const {
    return C(0.5) * x * (C(1) + ::erf(x * C(0.70710678118654752440)));
  }
};
/// The rounding functors, each `fn` of a floating value; integers are already whole.
#define LOCUS_ROUNDING_FUNCTOR(Name, fn)                                  \
  struct Name {                                                           \
    template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { \
      if constexpr (is_real_v<C>) return fn(x);                           \
      else return x;                                                      \
    }                                                                     \
  };
LOCUS_ROUNDING_FUNCTOR(Floor, ::floor)
LOCUS_ROUNDING_FUNCTOR(Ceil, ::ceil)
LOCUS_ROUNDING_FUNCTOR(Round, ::rint)  // half to even, as PyTorch (rint in the default rounding mode)
LOCUS_ROUNDING_FUNCTOR(Trunc, ::trunc)
#undef LOCUS_ROUNDING_FUNCTOR
/// Bounded below by lo and above by hi, in that order (so min > max gives max everywhere, as
/// PyTorch); NaN stays NaN.
struct Clamp {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>& p) const {
    if (is_nan(x)) return x;
    if (p.has_lo && x < p.lo) x = p.lo;
    if (p.has_hi && x > p.hi) x = p.hi;
    return x;
  }
};
struct LogicalNot {
  template <class C> LOCUS_HD bool operator()(C x, const Params<C>&) const { return !static_cast<bool>(x); }
};
struct Tan {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::tan(x); }
};
struct Sinh {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::sinh(x); }
};
struct Cosh {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::cosh(x); }
};
struct Asin {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::asin(x); }
};
struct Acos {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::acos(x); }
};
struct Atan {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::atan(x); }
};
struct Log2 {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::log2(x); }
};
struct Log10 {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::log10(x); }
};
struct Exp2 {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return ::exp2(x); }
};
struct Reciprocal {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return C(1) / x; }
};
/// x - trunc(x): keeps x's sign (frac(-1.5) is -0.5), NaN for infinities.
struct Frac {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return x - ::trunc(x); }
};
struct IsNan {
  template <class C> LOCUS_HD bool operator()(C x, const Params<C>&) const { return is_nan(x); }
};
struct IsInf {
  template <class C> LOCUS_HD bool operator()(C x, const Params<C>&) const { return is_inf(x); }
};
struct IsFinite {
  template <class C> LOCUS_HD bool operator()(C x, const Params<C>&) const { return !is_nan(x) && !is_inf(x); }
};
/// x * sigmoid(x), written as PyTorch's kernel: x / (1 + exp(-x)).
struct Silu {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return x / (C(1) + ::exp(-x)); }
};
/// x * tanh(softplus(x)).
struct Mish {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return x * ::tanh(::log1p(::exp(x))); }
};
struct Hardsigmoid {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return relu6_of_shifted(x) / C(6); }
};
struct Hardswish {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return x * relu6_of_shifted(x) / C(6); }
};
/// log(sigmoid(x)) without overflow: min(x, 0) - log1p(exp(-|x|)).
struct LogSigmoid {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const {
    const C lower = x < C(0) ? x : C(0);
    return lower - ::log1p(::exp(-::fabs(x)));
  }
};
/// x * x, wrapping for the small integers as PyTorch's pow(x, 2) (bool arrives as int64).
struct Square {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const { return static_cast<C>(x * x); }
};
/// NaN, +inf and -inf replaced by the given values (the front end fills in the dtype's limits
/// for the defaults); integers have none of them.
struct NanToNum {
  static constexpr bool kExtraParams = true;  ///< reads beta, threshold or the nan_to_num values
  template <class C> LOCUS_HD C operator()(C x, const Params<C>& p) const {
    if constexpr (is_real_v<C>) {
      if (x != x) return p.nan;
      if (x == C(INFINITY)) return p.posinf;
      if (x == C(-INFINITY)) return p.neginf;
    }
    return x;
  }
};
/// x for x > 0, else x * negative_slope (in alpha); NaN stays NaN.
struct LeakyRelu {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>& p) const { return x > C(0) ? x : x * p.alpha; }
};
/// scale * (x > 0 ? x : alpha * (exp(x) - 1)), scale in beta (1 for elu, selu's constant for selu).
struct Elu {
  static constexpr bool kExtraParams = true;  ///< reads beta, threshold or the nan_to_num values
  template <class C> LOCUS_HD C operator()(C x, const Params<C>& p) const {
    return x <= C(0) ? ::expm1(x) * (p.alpha * p.beta) : x * p.beta;
  }
};
/// log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (as PyTorch).
struct Softplus {
  static constexpr bool kExtraParams = true;  ///< reads beta, threshold or the nan_to_num values
  template <class C> LOCUS_HD C operator()(C x, const Params<C>& p) const {
    const C bx = x * p.beta;
    return bx > p.threshold ? x : ::log1p(::exp(bx)) / p.beta;
  }
};
/// Clamp to [lo, hi] (both always given), lo first as clamp; the backward differs from clamp's.
struct Hardtanh {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>& p) const {
    if (is_nan(x)) return x;
    if (x < p.lo) x = p.lo;
    if (x > p.hi) x = p.hi;
    return x;
  }
};
/// GELU's tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
struct GeluTanh {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const {
    const C inner = C(0.79788456080286535588) * (x + C(0.044715) * x * x * x);
    return C(0.5) * x * (C(1) + ::tanh(inner));
  }
};

// ---- binary -------------------------------------------------------------------------------

struct Add {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>& p) const {
    if constexpr (is_bool_v<C>) return a || (p.alpha && b);
    else return static_cast<C>(a + p.alpha * b);
  }
};
struct Sub {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>& p) const { return static_cast<C>(a - p.alpha * b); }
};
struct Mul {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>&) const {
    if constexpr (is_bool_v<C>) return a && b;
    else return static_cast<C>(a * b);
  }
};
/// True division (floating compute types only: the front end promotes integers).
struct Div {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>&) const { return a / b; }
};
struct DivTrunc {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>&) const {
    if constexpr (is_real_v<C>) return ::trunc(a / b);
    else return int_div(a, b);
  }
};
/// ReLU's gradient: `a` (the output's gradient) where `b` (ReLU's output) is above 0, else 0.
/// A NaN output passes its gradient, as PyTorch's threshold_backward (b <= 0 is false).
struct ReluBackward {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>&) const { return b <= C(0) ? C(0) : a; }
};
/// GELU's gradient (the exact form): `a` (the output's gradient) times Phi(b) + b phi(b) at the
/// input b, in one pass, as PyTorch's gelu_backward.
struct GeluBackward {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>&) const {
    const C cdf = C(0.5) * (C(1) + ::erf(b * C(0.70710678118654752440)));
    const C pdf = ::exp(C(-0.5) * b * b) * C(0.39894228040143267794);
    return a * (cdf + b * pdf);
  }
};
/// Python's floor division; for floats PyTorch's div_floor_floating, which is exact where
/// floor(a / b) would round the quotient first.
struct DivFloor {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>&) const {
    if constexpr (is_real_v<C>) {
      if (b == C(0)) return a / b;
      const C mod = ::fmod(a, b);
      C div = (a - mod) / b;
      if (mod != C(0) && (b < C(0)) != (mod < C(0))) div -= C(1);
      if (div == C(0)) return ::copysign(C(0), a / b);
      C floor_div = ::floor(div);
      if (div - floor_div > C(0.5)) floor_div += C(1);
      return floor_div;
    } else {
      const C q = int_div(a, b);
      if constexpr (std::is_signed_v<C>)
        if (int_mod(a, b) != 0 && ((a < 0) != (b < 0))) return static_cast<C>(q - 1);
      return q;
    }
  }
};
struct FloorDivide : DivFloor {};
/// Python's modulo: the result has the divisor's sign.
struct Remainder {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>&) const {
    if constexpr (is_real_v<C>) {
      C mod = ::fmod(a, b);
      if (mod != C(0) && ((b < C(0)) != (mod < C(0)))) mod += b;
      return mod;
    } else {
      C mod = int_mod(a, b);
      if constexpr (std::is_signed_v<C>)
        if (mod != 0 && ((b < 0) != (mod < 0))) mod = static_cast<C>(mod + b);
      return mod;
    }
  }
};
/// C's fmod: the result has the dividend's sign.
struct Fmod {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>&) const {
    if constexpr (is_real_v<C>) return ::fmod(a, b);
    else return int_mod(a, b);
  }
};
struct Pow {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>&) const {
    if constexpr (is_real_v<C>) return ::pow(a, b);
    else return int_pow(a, b);
  }
};
/// NaN-propagating maximum and minimum.
struct Maximum {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>&) const {
    if (is_nan(a) || is_nan(b)) return is_nan(a) ? a : b;
    return a > b ? a : b;
  }
};
struct Minimum {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>&) const {
    if (is_nan(a) || is_nan(b)) return is_nan(a) ? a : b;
    return a < b ? a : b;
  }
};
struct Eq {
  template <class C> LOCUS_HD bool operator()(C a, C b, const Params<C>&) const { return a == b; }
};
struct Ne {
  template <class C> LOCUS_HD bool operator()(C a, C b, const Params<C>&) const { return a != b; }
};
struct Lt {
  template <class C> LOCUS_HD bool operator()(C a, C b, const Params<C>&) const { return a < b; }
};
struct Le {
  template <class C> LOCUS_HD bool operator()(C a, C b, const Params<C>&) const { return a <= b; }
};
struct Gt {
  template <class C> LOCUS_HD bool operator()(C a, C b, const Params<C>&) const { return a > b; }
};
struct Ge {
  template <class C> LOCUS_HD bool operator()(C a, C b, const Params<C>&) const { return a >= b; }
};
struct LogicalAnd {
  template <class C> LOCUS_HD bool operator()(C a, C b, const Params<C>&) const { return static_cast<bool>(a) && static_cast<bool>(b); }
};
struct LogicalOr {
  template <class C> LOCUS_HD bool operator()(C a, C b, const Params<C>&) const { return static_cast<bool>(a) || static_cast<bool>(b); }
};
struct LogicalXor {
  template <class C> LOCUS_HD bool operator()(C a, C b, const Params<C>&) const { return static_cast<bool>(a) != static_cast<bool>(b); }
};
struct Atan2 {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>&) const { return ::atan2(a, b); }
};
struct Hypot {
  template <class C> LOCUS_HD C operator()(C a, C b, const Params<C>&) const { return ::hypot(a, b); }
};

}  // namespace locus::ops::fn
