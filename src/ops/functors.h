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

/// The scalar parameters an elementwise op may take, in its compute type.
template <class C>
struct Params {
  C alpha = C(1);       ///< add / sub: a + alpha * b
  C lo = C(0), hi = C(0);  ///< clamp bounds, valid where has_lo / has_hi
  bool has_lo = false, has_hi = false;
};

template <class C>
inline constexpr bool is_real_v = std::is_floating_point_v<C>;
template <class C>
inline constexpr bool is_bool_v = std::is_same_v<C, bool>;

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
/// Rounding: floating values round, integers are already whole.
struct Floor {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const {
    if constexpr (is_real_v<C>) return ::floor(x);
    else return x;
  }
};
struct Ceil {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const {
    if constexpr (is_real_v<C>) return ::ceil(x);
    else return x;
  }
};
/// Half to even, as PyTorch (rint under the default rounding mode).
struct Round {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const {
    if constexpr (is_real_v<C>) return ::rint(x);
    else return x;
  }
};
struct Trunc {
  template <class C> LOCUS_HD C operator()(C x, const Params<C>&) const {
    if constexpr (is_real_v<C>) return ::trunc(x);
    else return x;
  }
};
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

}  // namespace locus::ops::fn
