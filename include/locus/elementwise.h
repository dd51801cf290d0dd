#pragma once
/// \file elementwise.h
/// Elementwise operations as free functions and operators, as in PyTorch: operands broadcast,
/// dtypes promote by PyTorch's rules (a C++ number joins as a Python number does, so
/// `2.5 / int_tensor` is floating and `uint8_tensor + 1` stays uint8), and every operand must be
/// on one device (a 0-dim CPU tensor may join as a scalar).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <optional>
#include <string_view>

#include "locus/scalar.h"
#include "locus/tensor.h"

namespace locus {

// ---- arithmetic ---------------------------------------------------------------------------
/// a + alpha * b (alpha must be integral for integral results).
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor add(const Tensor& a, const Scalar& b);
/// a - alpha * b; bool operands are a DTypeError (use logical_xor).
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Scalar& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Scalar& b);
/// True division: integer and bool operands give the default float dtype.
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Scalar& b);
/// Division with PyTorch's `rounding_mode`: "trunc" rounds toward zero, "floor" down, and both
/// keep integer dtypes; std::nullopt is true division. Another mode is a ValueError. Integer
/// division by zero is a ValueError on cpu and sim (PyTorch's ZeroDivisionError) and gives 0 on
/// cuda, which cannot raise without waiting for the device.
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode);
Tensor div(const Tensor& a, const Scalar& b, std::optional<std::string_view> rounding_mode);
/// Python's floor division, `a // b` (div with rounding_mode "floor"; not differentiable, as in
/// PyTorch).
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, const Scalar& b);
/// Python's modulo: the result takes the divisor's sign.
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Scalar& b);
/// C's fmod: the result takes the dividend's sign.
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Scalar& b);
/// a ** exponent; integers to a negative integer number are a ValueError, as in PyTorch.
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor pow(const Tensor& a, const Scalar& exponent);
/// Elementwise maximum and minimum; NaN wins.
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Scalar& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Scalar& b);
/// Writes `a + alpha*b` into `out`, which keeps its dtype (the result must cast to it) and shape.
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b);

// ---- functions of one tensor ------------------------------------------------------------
// Exponentials, logarithms, roots, trigonometric and error functions give the default float
// dtype for integer and bool inputs. neg, abs, relu and the rounding functions keep the dtype
// and refuse bool; sign keeps any dtype.
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
/// -1, 0 or 1 in x's dtype (0 for NaN, as PyTorch 1.13).
Tensor sign(const Tensor& x);
Tensor exp(const Tensor& x);
/// exp(x) - 1, accurate near 0.
Tensor expm1(const Tensor& x);
Tensor log(const Tensor& x);
/// log(1 + x), accurate near 0.
Tensor log1p(const Tensor& x);
Tensor sqrt(const Tensor& x);
/// 1 / sqrt(x).
Tensor rsqrt(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
/// The error function.
Tensor erf(const Tensor& x);
Tensor relu(const Tensor& x);
/// Exact GELU: x * Phi(x) with the error function, PyTorch's default; floating inputs only.
Tensor gelu(const Tensor& x);
/// Rounding (integers are returned as they are): down, up, to nearest with ties to even, and
/// toward zero.
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);
Tensor trunc(const Tensor& x);
/// Limits to [min, max]; either bound may be absent (not both: ValueError). The bounds take part
/// in type promotion (an int tensor clamped to 1.5 is floating); min > max gives max everywhere.
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor& relu_out(Tensor& out, const Tensor& x);
/// Trigonometric, hyperbolic and their inverses; log2, log10, 2^x and 1/x. Integer and bool
/// inputs give the default float dtype, as every function of this group.
Tensor tan(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor log10(const Tensor& x);
Tensor exp2(const Tensor& x);
Tensor reciprocal(const Tensor& x);
/// x * x in x's dtype; a bool tensor gives int64 (as PyTorch's pow(x, 2)).
Tensor square(const Tensor& x);
/// x - trunc(x), with x's sign; floating dtypes only (DTypeError otherwise).
Tensor frac(const Tensor& x);
/// The angle of (b, a), atan2(a, b), in (-pi, pi]; integers give the default float dtype.
Tensor atan2(const Tensor& a, const Tensor& b);
Tensor atan2(const Tensor& a, const Scalar& b);
/// sqrt(a^2 + b^2) without overflow; floating dtypes only.
Tensor hypot(const Tensor& a, const Tensor& b);
Tensor hypot(const Tensor& a, const Scalar& b);
/// Bool tensors: NaN, +-inf, neither (any dtype; integers are never NaN or infinite).
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);
/// NaN, +inf and -inf replaced by `nan`, `posinf` and `neginf`; an absent infinity bound is the
/// dtype's largest (lowest) finite value, as PyTorch. Integer and bool tensors are copied.
Tensor nan_to_num(const Tensor& x, std::optional<double> nan = 0.0, std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
/// clamp with one bound (the bound takes part in type promotion, as clamp's).
Tensor clamp_min(const Tensor& x, const Scalar& min);
Tensor clamp_max(const Tensor& x, const Scalar& max);
/// start + weight * (end - start), computed as PyTorch does (from `end` when |weight| >= 0.5);
/// start, end (and a weight tensor) must share one floating dtype (DTypeError otherwise) and
/// broadcast together.
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
/// self + value * tensor1 * tensor2; the tensors promote together, bool is a DTypeError, and for
/// integer results `value` is taken as an integer (as PyTorch).
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
/// self + value * tensor1 / tensor2; two integer (or bool) tensor1 and tensor2 are a DTypeError,
/// as in PyTorch (no integer division).
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);

// ---- activations ----------------------------------------------------------------------------
// Floating dtypes only, except hardtanh and relu6 (any dtype but bool): DTypeError otherwise, as
// PyTorch's CPU kernels refuse them. The `_` forms write into x, which must not require grad.
/// x for x > 0, else negative_slope * x.
Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope = 0.01);
Tensor& leaky_relu_(Tensor& x, const Scalar& negative_slope = 0.01);
/// x for x > 0, else alpha * (exp(x) - 1).
Tensor elu(const Tensor& x, const Scalar& alpha = 1.0);
Tensor& elu_(Tensor& x, const Scalar& alpha = 1.0);
/// scale * elu(x, alpha) with PyTorch's constants (alpha 1.6732632..., scale 1.0507009...).
Tensor selu(const Tensor& x);
Tensor& selu_(Tensor& x);
/// x * sigmoid(x).
Tensor silu(const Tensor& x);
/// x * tanh(softplus(x)).
Tensor mish(const Tensor& x);
/// log(1 + exp(beta * x)) / beta, and x where beta * x > threshold.
Tensor softplus(const Tensor& x, const Scalar& beta = 1, const Scalar& threshold = 20);
/// x limited to [min_val, max_val] (the gradient is zero at the bounds themselves). Bool tensors,
/// and unsigned ones with a negative bound, are errors, as in PyTorch; the bounds do not change
/// the dtype.
Tensor hardtanh(const Tensor& x, const Scalar& min_val = -1.0, const Scalar& max_val = 1.0);
Tensor& hardtanh_(Tensor& x, const Scalar& min_val = -1.0, const Scalar& max_val = 1.0);
/// hardtanh(x, 0, 6).
Tensor relu6(const Tensor& x);
Tensor& relu6_(Tensor& x);
/// min(max(x + 3, 0), 6) / 6.
Tensor hardsigmoid(const Tensor& x);
/// x * hardsigmoid(x).
Tensor hardswish(const Tensor& x);
/// log(sigmoid(x)), without overflow.
Tensor logsigmoid(const Tensor& x);
/// GELU with PyTorch's `approximate`: "none" (the exact erf form) or "tanh"; ValueError otherwise.
Tensor gelu(const Tensor& x, std::string_view approximate);

// ---- comparisons and logic (bool results) -------------------------------------------------
Tensor eq(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Scalar& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Scalar& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Scalar& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Scalar& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Scalar& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Scalar& b);
/// The truth of each value (non-zero is true) combined: and, or, xor, not. Any dtypes.
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Scalar& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Scalar& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Scalar& b);
Tensor logical_not(const Tensor& x);
/// `condition ? a : b` elementwise; condition must be bool. All three broadcast.
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);

// ---- operators ----------------------------------------------------------------------------
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a);
/// logical_not for bool tensors, as `~mask` in PyTorch (bitwise not is not in Locus).
Tensor operator~(const Tensor& a);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Scalar& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Scalar& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Scalar& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Scalar& b);
/// The same on a temporary handle, as LibTorch's member operators allow: `w[5][7] += 1e-3`
/// writes into the element the view names.
inline Tensor& operator+=(Tensor&& a, const Tensor& b) { return a += b; }
inline Tensor& operator+=(Tensor&& a, const Scalar& b) { return a += b; }
inline Tensor& operator-=(Tensor&& a, const Tensor& b) { return a -= b; }
inline Tensor& operator-=(Tensor&& a, const Scalar& b) { return a -= b; }
inline Tensor& operator*=(Tensor&& a, const Tensor& b) { return a *= b; }
inline Tensor& operator*=(Tensor&& a, const Scalar& b) { return a *= b; }
inline Tensor& operator/=(Tensor&& a, const Tensor& b) { return a /= b; }
inline Tensor& operator/=(Tensor&& a, const Scalar& b) { return a /= b; }
/// Elementwise comparisons returning bool tensors, as in LibTorch.
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Scalar& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Scalar& b);

}  // namespace locus

LOCUS_API_END
