#pragma once
/// \file elementwise.h
/// Elementwise operations as free functions and operators, as in PyTorch: operands broadcast,
/// dtypes promote by PyTorch's rules (a C++ number joins as a Python number does, so
/// `2.5 / int_tensor` is floating and `uint8_tensor + 1` stays uint8), and every operand must be
/// on one device (a 0-dim CPU tensor may join as a scalar).

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
