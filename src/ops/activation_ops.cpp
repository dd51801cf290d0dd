// The activations of the op table that take parameters, and their in-place forms (elementwise.h).
// The parameter-free ones (silu, mish, hardsigmoid, ...) are generated from their table lines in
// elementwise_ops.cpp; these check their arguments here, before the one op path runs them.

#include <string>

#include "locus/errors.h"
#include "locus/ops.h"
#include "src/ops/elementwise_call.h"
#include "src/ops/parameterised_ops.h"

namespace locus {

using ops::OpId;

namespace ops {

ElementwiseScalars hardtanh_scalars(const Tensor& x, const Scalar& min_val, const Scalar& max_val) {
  const DType dtype = x.dtype();
  if (dtype == DType::Bool) throw DTypeError(op_prefix(OpId::Hardtanh) + "Bool inputs not supported for hardtanh");
  if (dtype == DType::UInt8 && (min_val.to_double() < 0 || max_val.to_double() < 0))
    throw ValueError(op_prefix(OpId::Hardtanh) + "cannot do hardtanh on an unsigned type with negative limits");
  ElementwiseScalars s;
  // PyTorch computes hardtanh into a tensor of x's dtype, so float bounds do not promote an
  // integer tensor; as integers (truncated) they give the same values and leave the dtype alone.
  s.lo = is_floating_point(dtype) || !min_val.is_floating_point() ? min_val : Scalar(min_val.to_int64());
  s.hi = is_floating_point(dtype) || !max_val.is_floating_point() ? max_val : Scalar(max_val.to_int64());
  s.has_lo = s.has_hi = true;
  return s;
}

ElementwiseScalars elu_scalars(const Scalar& alpha, const Scalar& scale) {
  ElementwiseScalars s;
  s.alpha = alpha;
  s.beta = scale;
  return s;
}

}  // namespace ops

namespace {

// PyTorch's SELU constants (Klambauer et al., 2017), as torch.selu uses them.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

ops::ElementwiseScalars leaky_relu_scalars(const Scalar& negative_slope) {
  ops::ElementwiseScalars s;
  s.alpha = negative_slope;
  return s;
}

}  // namespace

Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope) {
  return ops::run_unary(OpId::LeakyRelu, x, {}, leaky_relu_scalars(negative_slope));
}
Tensor& leaky_relu_(Tensor& x, const Scalar& negative_slope) {
  ops::run_unary(OpId::LeakyRelu, x, x, leaky_relu_scalars(negative_slope));
  return x;
}

Tensor elu(const Tensor& x, const Scalar& alpha) { return ops::run_unary(OpId::Elu, x, {}, ops::elu_scalars(alpha, 1)); }
Tensor& elu_(Tensor& x, const Scalar& alpha) {
  ops::run_unary(OpId::Elu, x, x, ops::elu_scalars(alpha, 1));
  return x;
}

Tensor selu(const Tensor& x) { return ops::run_unary(OpId::Elu, x, {}, ops::elu_scalars(kSeluAlpha, kSeluScale)); }
Tensor& selu_(Tensor& x) {
  ops::run_unary(OpId::Elu, x, x, ops::elu_scalars(kSeluAlpha, kSeluScale));
  return x;
}

Tensor softplus(const Tensor& x, const Scalar& beta, const Scalar& threshold) {
  ops::ElementwiseScalars s;
  s.beta = beta;
  s.threshold = threshold;
  return ops::run_unary(OpId::Softplus, x, {}, s);
}

Tensor hardtanh(const Tensor& x, const Scalar& min_val, const Scalar& max_val) {
  return ops::run_unary(OpId::Hardtanh, x, {}, ops::hardtanh_scalars(x, min_val, max_val));
}
Tensor& hardtanh_(Tensor& x, const Scalar& min_val, const Scalar& max_val) {
  ops::run_unary(OpId::Hardtanh, x, x, ops::hardtanh_scalars(x, min_val, max_val));
  return x;
}

Tensor relu6(const Tensor& x) { return hardtanh(x, 0, 6); }
Tensor& relu6_(Tensor& x) { return hardtanh_(x, 0, 6); }

Tensor gelu(const Tensor& x, std::string_view approximate) {
  if (approximate == "none") return ops::run_unary(OpId::Gelu, x);
  if (approximate == "tanh") return ops::run_unary(OpId::GeluTanh, x);
  throw ValueError(ops::op_prefix(OpId::Gelu) + "approximate argument must be either none or tanh, got \"" +
                   std::string(approximate) + "\"");
}

}  // namespace locus
