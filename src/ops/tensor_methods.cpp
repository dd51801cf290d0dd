// Tensor's methods that run an op (they forward to the free functions of ops.h), the
// operators, and allclose / equal. They live with the ops, not with Tensor in core: core
// knows what a tensor is, ops know what can be done with one.

#include <sstream>
#include <utility>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "locus/tensor.h"
#include "src/core/public_op.h"
#include "src/ops/elementwise_call.h"
#include "src/ops/public_op.h"

namespace locus {

using ops::OpId;

Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const { return locus::add(*this, o, alpha); }
Tensor Tensor::add(const Scalar& o) const { return locus::add(*this, o); }
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const { return locus::sub(*this, o, alpha); }
Tensor Tensor::sub(const Scalar& o) const { return locus::sub(*this, o); }
Tensor Tensor::div(const Tensor& o, std::optional<std::string_view> mode) const { return locus::div(*this, o, mode); }
Tensor Tensor::div(const Scalar& o, std::optional<std::string_view> mode) const { return locus::div(*this, o, mode); }
Tensor Tensor::div(const Tensor& o) const { return locus::div(*this, o); }
Tensor Tensor::div(const Scalar& o) const { return locus::div(*this, o); }
Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) { ops::run_binary(OpId::Add, *this, o, *this, alpha); return *this; }
Tensor& Tensor::add_(const Scalar& o) { ops::run_binary(OpId::Add, *this, o, *this); return *this; }
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) { ops::run_binary(OpId::Sub, *this, o, *this, alpha); return *this; }
Tensor& Tensor::sub_(const Scalar& o) { ops::run_binary(OpId::Sub, *this, o, *this); return *this; }
Tensor& Tensor::mul_(const Tensor& o) { ops::run_binary(OpId::Mul, *this, o, *this); return *this; }
Tensor& Tensor::mul_(const Scalar& o) { ops::run_binary(OpId::Mul, *this, o, *this); return *this; }
Tensor& Tensor::div_(const Tensor& o) { ops::run_binary(OpId::Div, *this, o, *this); return *this; }
Tensor& Tensor::div_(const Scalar& o) { ops::run_binary(OpId::Div, *this, o, *this); return *this; }

#define LOCUS_BINARY_METHOD(id, name)                                                  \
  Tensor Tensor::name(const Tensor& o) const { return locus::name(*this, o); }
#define LOCUS_BINARY_METHODS(id, name)                                                 \
  LOCUS_BINARY_METHOD(id, name)                                                        \
  Tensor Tensor::name(const Scalar& o) const { return locus::name(*this, o); }
LOCUS_BINARY_METHODS(Mul, mul)
LOCUS_BINARY_METHODS(FloorDivide, floor_divide)
LOCUS_BINARY_METHODS(Remainder, remainder)
LOCUS_BINARY_METHODS(Fmod, fmod)
LOCUS_BINARY_METHODS(Pow, pow)
LOCUS_BINARY_METHODS(Eq, eq)
LOCUS_BINARY_METHODS(Ne, ne)
LOCUS_BINARY_METHODS(Lt, lt)
LOCUS_BINARY_METHODS(Le, le)
LOCUS_BINARY_METHODS(Gt, gt)
LOCUS_BINARY_METHODS(Ge, ge)
LOCUS_BINARY_METHOD(Maximum, maximum)
LOCUS_BINARY_METHOD(Minimum, minimum)
LOCUS_BINARY_METHOD(LogicalAnd, logical_and)
LOCUS_BINARY_METHOD(LogicalOr, logical_or)
LOCUS_BINARY_METHOD(LogicalXor, logical_xor)
#undef LOCUS_BINARY_METHODS
#undef LOCUS_BINARY_METHOD

#define LOCUS_UNARY_METHOD(id, name) \
  Tensor Tensor::name() const { return locus::name(*this); }
#define LOCUS_UNARY_METHODS(id, name) \
  LOCUS_UNARY_METHOD(id, name)        \
  Tensor& Tensor::name##_() { ops::run_unary(OpId::id, *this, *this); return *this; }
LOCUS_UNARY_METHODS(Neg, neg)
LOCUS_UNARY_METHODS(Abs, abs)
LOCUS_UNARY_METHODS(Sign, sign)
LOCUS_UNARY_METHODS(Exp, exp)
LOCUS_UNARY_METHODS(Expm1, expm1)
LOCUS_UNARY_METHODS(Log, log)
LOCUS_UNARY_METHODS(Log1p, log1p)
LOCUS_UNARY_METHODS(Sqrt, sqrt)
LOCUS_UNARY_METHODS(Rsqrt, rsqrt)
LOCUS_UNARY_METHODS(Sin, sin)
LOCUS_UNARY_METHODS(Cos, cos)
LOCUS_UNARY_METHODS(Tanh, tanh)
LOCUS_UNARY_METHODS(Sigmoid, sigmoid)
LOCUS_UNARY_METHODS(Erf, erf)
LOCUS_UNARY_METHODS(Relu, relu)
LOCUS_UNARY_METHODS(Floor, floor)
LOCUS_UNARY_METHODS(Ceil, ceil)
LOCUS_UNARY_METHODS(Round, round)
LOCUS_UNARY_METHODS(Trunc, trunc)
LOCUS_UNARY_METHOD(Gelu, gelu)
LOCUS_UNARY_METHOD(LogicalNot, logical_not)
#undef LOCUS_UNARY_METHODS
#undef LOCUS_UNARY_METHOD

Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const { return locus::clamp(*this, min, max); }
Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) {
  if (!min && !max) throw ValueError(ops::op_prefix(OpId::Clamp) + "at least one of min and max must be given");
  ops::run_unary(OpId::Clamp, *this, *this, min, max);
  return *this;
}
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const { return locus::where(condition, *this, other); }
Tensor Tensor::sum(std::optional<DType> dtype) const { return locus::sum(*this, dtype); }
Tensor Tensor::sum(const Shape& dims, bool keepdim, std::optional<DType> dtype) const { return locus::sum(*this, dims, keepdim, dtype); }
Tensor Tensor::sum(int64_t dim, bool keepdim, std::optional<DType> dtype) const { return locus::sum(*this, dim, keepdim, dtype); }
Tensor Tensor::mean() const { return locus::mean(*this); }
Tensor Tensor::mean(const Shape& dims, bool keepdim) const { return locus::mean(*this, dims, keepdim); }
Tensor Tensor::mean(int64_t dim, bool keepdim) const { return locus::mean(*this, dim, keepdim); }
Tensor Tensor::prod(std::optional<DType> dtype) const { return locus::prod(*this, dtype); }
Tensor Tensor::prod(int64_t dim, bool keepdim, std::optional<DType> dtype) const { return locus::prod(*this, dim, keepdim, dtype); }
Tensor Tensor::norm(const Scalar& p) const { return locus::norm(*this, p); }
Tensor Tensor::norm(const Scalar& p, const Shape& dims, bool keepdim) const { return locus::norm(*this, p, dims, keepdim); }
Tensor Tensor::var(bool unbiased) const { return locus::var(*this, unbiased); }
Tensor Tensor::var(const Shape& dims, bool unbiased, bool keepdim) const { return locus::var(*this, dims, unbiased, keepdim); }
Tensor Tensor::var(std::initializer_list<int64_t> dims, bool unbiased, bool keepdim) const {
  return locus::var(*this, Shape(dims), unbiased, keepdim);
}
Tensor Tensor::std(std::initializer_list<int64_t> dims, bool unbiased, bool keepdim) const {
  return locus::std(*this, Shape(dims), unbiased, keepdim);
}
Tensor Tensor::std(bool unbiased) const { return locus::std(*this, unbiased); }
Tensor Tensor::std(const Shape& dims, bool unbiased, bool keepdim) const { return locus::std(*this, dims, unbiased, keepdim); }
Tensor Tensor::any() const { return locus::any(*this); }
Tensor Tensor::any(int64_t dim, bool keepdim) const { return locus::any(*this, dim, keepdim); }
Tensor Tensor::all() const { return locus::all(*this); }
Tensor Tensor::all(int64_t dim, bool keepdim) const { return locus::all(*this, dim, keepdim); }
Tensor Tensor::count_nonzero(const Shape& dims) const { return locus::count_nonzero(*this, dims); }
Tensor Tensor::max() const { return locus::max(*this); }
Tensor Tensor::min() const { return locus::min(*this); }
ValuesIndices Tensor::max(int64_t dim, bool keepdim) const { return locus::max(*this, dim, keepdim); }
ValuesIndices Tensor::min(int64_t dim, bool keepdim) const { return locus::min(*this, dim, keepdim); }
Tensor Tensor::argmax() const { return locus::argmax(*this); }
Tensor Tensor::argmax(int64_t dim, bool keepdim) const { return locus::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin() const { return locus::argmin(*this); }
Tensor Tensor::argmin(int64_t dim, bool keepdim) const { return locus::argmin(*this, dim, keepdim); }
Tensor Tensor::softmax(int64_t dim) const { return locus::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return locus::log_softmax(*this, dim); }
Tensor Tensor::matmul(const Tensor& o) const { return locus::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& o) const { return locus::mm(*this, o); }
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return locus::index_select(*this, dim, index); }
Tensor Tensor::gather(int64_t dim, const Tensor& index) const { return locus::gather(*this, dim, index); }

// Both follow the device rule like every op: comparing a sim tensor with a CPU one is the
// missing .to(device) the rule exists to catch (PyTorch raises too). They run as ops on the
// tensors' device, inside their public name, so a shape that does not broadcast is reported as
// allclose's.
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  const ops::PublicOp op("allclose", {{a, "self"}, {b, "other"}}, ops::CpuScalars::Join);
  if (a.dtype() != b.dtype())
    throw DTypeError(detail::error_prefix("allclose") + std::string(dtype_name(a.dtype())) + " did not match " +
                     std::string(dtype_name(b.dtype())));
  for (const auto& [value, name] : {std::pair{rtol, "rtol"}, std::pair{atol, "atol"}})
    if (!(value >= 0))
      throw ValueError(detail::error_prefix("allclose") + name + " must be greater than or equal to zero, but got " +
                       (std::ostringstream() << value).str());
  NoGradGuard no_grad;
  const Tensor x = a.detach(), y = b.detach();
  // torch.isclose: equal values are close (exactly, in their own dtype: infinities too); any
  // others only when the error is finite and within the allowance. The error is taken in
  // float64, or in int64 for integers (exact where float64 would round 2^53 + 1 to 2^53).
  Tensor close = x.eq(y);
  const DType wide = is_floating_point(x.dtype()) ? kFloat64 : kInt64;
  const Tensor error = (x.to(wide) - y.to(wide)).abs().to(kFloat64);
  close = close.logical_or(error.isfinite().logical_and(error.le(y.to(kFloat64).abs() * rtol + atol)));
  if (equal_nan) close = close.logical_or(x.isnan().logical_and(y.isnan()));
  return close.all().item<bool>();
}

bool equal(const Tensor& a, const Tensor& b) {
  const ops::PublicOp op("equal", {{a, "self"}, {b, "other"}}, ops::CpuScalars::Join);
  if (!(a.shape() == b.shape())) return false;
  NoGradGuard no_grad;
  return a.detach().eq(b.detach()).all().item<bool>();
}

bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return locus::allclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::equal(const Tensor& other) const { return locus::equal(*this, other); }

}  // namespace locus
