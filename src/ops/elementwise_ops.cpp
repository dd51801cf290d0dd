// The public elementwise functions and operators (elementwise.h). The plain ones are generated
// from the op table; all of them run through the one op path (elementwise_call.cpp).

#include <cfloat>
#include <string>

#include "locus/errors.h"
#include "locus/ops.h"
#include "src/ops/elementwise_call.h"
#include "src/ops/parameterised_ops.h"

namespace locus {

using ops::OpId;

#define LOCUS_UNARY_FUNCTION(id, name, ...) \
  Tensor name(const Tensor& x) { return ops::run_unary(OpId::id, x); }
LOCUS_PLAIN_UNARY_OPS(LOCUS_UNARY_FUNCTION)
#undef LOCUS_UNARY_FUNCTION

#define LOCUS_BINARY_FUNCTIONS(id, name, ...)                                                      \
  Tensor name(const Tensor& a, const Tensor& b) { return ops::run_binary(OpId::id, a, b); }      \
  Tensor name(const Tensor& a, const Scalar& b) { return ops::run_binary(OpId::id, a, b); }
LOCUS_PLAIN_BINARY_OPS(LOCUS_BINARY_FUNCTIONS)
#undef LOCUS_BINARY_FUNCTIONS

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) { return ops::run_binary(OpId::Add, a, b, {}, alpha); }
Tensor add(const Tensor& a, const Scalar& b) { return ops::run_binary(OpId::Add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) { return ops::run_binary(OpId::Sub, a, b, {}, alpha); }
Tensor sub(const Tensor& a, const Scalar& b) { return ops::run_binary(OpId::Sub, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return ops::run_binary(OpId::Div, a, b); }
Tensor div(const Tensor& a, const Scalar& b) { return ops::run_binary(OpId::Div, a, b); }

namespace {
OpId div_op(std::optional<std::string_view> mode) {
  if (!mode) return OpId::Div;
  if (*mode == "trunc") return OpId::DivTrunc;
  if (*mode == "floor") return OpId::DivFloor;
  throw ValueError(ops::op_prefix(OpId::Div) + "expected rounding_mode to be one of std::nullopt, \"trunc\" or \"floor\", but found \"" +
                   std::string(*mode) + "\"");
}
}  // namespace

Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> mode) {
  return ops::run_binary(div_op(mode), a, b);
}
Tensor div(const Tensor& a, const Scalar& b, std::optional<std::string_view> mode) {
  return ops::run_binary(div_op(mode), a, b);
}

Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  ops::run_binary(OpId::Add, a, b, out, alpha);
  return out;
}
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  ops::run_binary(OpId::Sub, a, b, out, alpha);
  return out;
}
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b) {
  ops::run_binary(OpId::Mul, a, b, out);
  return out;
}
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b) {
  ops::run_binary(OpId::Div, a, b, out);
  return out;
}
Tensor& relu_out(Tensor& out, const Tensor& x) {
  ops::run_unary(OpId::Relu, x, out);
  return out;
}

Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  if (!min && !max) throw ValueError(ops::op_prefix(OpId::Clamp) + "at least one of min and max must be given");
  return ops::run_unary(OpId::Clamp, x, {}, min, max);
}

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) { return ops::run_where(condition, a, b); }

Tensor clamp_min(const Tensor& x, const Scalar& min) { return ops::run_unary(OpId::Clamp, x, {}, min, std::nullopt); }
Tensor clamp_max(const Tensor& x, const Scalar& max) { return ops::run_unary(OpId::Clamp, x, {}, std::nullopt, max); }

// PyTorch squares a bool tensor as pow(x, 2), which promotes bool to int64 first; the op itself
// keeps its dtype and refuses bool (the in-place form, which cannot change the dtype).
Tensor square(const Tensor& x) { return ops::run_unary(OpId::Square, x.dtype() == DType::Bool ? x.to(DType::Int64) : x); }

namespace {

// The largest finite value of a floating dtype (finfo.max), nan_to_num's default for +inf.
double largest_finite(DType dtype) {
  switch (dtype) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    case DType::Float32: return FLT_MAX;
    default: return DBL_MAX;
  }
}

}  // namespace

namespace ops {

// Integer and bool tensors keep the defaults: a large double would not even convert to their
// compute type.
ElementwiseScalars nan_to_num_scalars(DType dtype, std::optional<double> nan, std::optional<double> posinf,
                                      std::optional<double> neginf) {
  ElementwiseScalars s;
  if (!is_floating_point(dtype)) return s;
  s.nan = nan.value_or(0.0);
  s.posinf = posinf.value_or(largest_finite(dtype));
  s.neginf = neginf.value_or(-largest_finite(dtype));
  return s;
}

}  // namespace ops

Tensor nan_to_num(const Tensor& x, std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) {
  return ops::run_unary(OpId::NanToNum, x, {}, ops::nan_to_num_scalars(x.dtype(), nan, posinf, neginf));
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return ops::run_binary(OpId::Sub, a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator/(const Scalar& a, const Tensor& b) { return ops::run_binary(OpId::Div, a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator~(const Tensor& a) {
  if (a.dtype() != DType::Bool)
    throw DTypeError("[locus::bitwise_not] Locus has no bitwise ops: operator~ is logical_not for bool tensors, got " +
                     std::string(dtype_name(a.dtype())));
  return logical_not(a);
}
Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
Tensor& operator+=(Tensor& a, const Scalar& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
Tensor& operator-=(Tensor& a, const Scalar& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
Tensor& operator*=(Tensor& a, const Scalar& b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b); }
Tensor& operator/=(Tensor& a, const Scalar& b) { return a.div_(b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, b); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, b); }

}  // namespace locus
