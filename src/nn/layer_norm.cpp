// F::layer_norm and F::rms_norm (their arguments checked with PyTorch's messages; the op itself
// is ops::layer_norm / ops::rms_norm, src/ops/layer_norm_ops.cpp) and the LayerNorm and RMSNorm
// modules.

#include "locus/nn/layer_norm.h"

#include <string>
#include <vector>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/core/public_op.h"
#include "src/nn/conv_geometry.h"
#include "src/nn/python_repr.h"
#include "src/ops/normalization.h"
#include "src/ops/public_op.h"

namespace locus::nn {
namespace functional {
namespace {

using locus::detail::error_prefix;

std::string list_text(const std::vector<int64_t>& v) { return nn::detail::shape_text(Shape(v)); }

// The dims normalised together: the input's last normalized_shape.size(), checked as PyTorch's
// layer_norm checks them (messages included).
Shape trailing_dims(const char* op, const Tensor& input, const std::vector<int64_t>& normalized_shape) {
  const int64_t d = static_cast<int64_t>(normalized_shape.size()), rank = input.dim();
  if (d == 0)
    throw ShapeError(error_prefix(op) + "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
                     "one element, but got normalized_shape = []");
  bool matches = rank >= d;
  for (int64_t i = 0; matches && i < d; ++i) matches = input.size(rank - d + i) == normalized_shape[static_cast<size_t>(i)];
  if (!matches) {
    std::string expected = "[*";
    for (int64_t s : normalized_shape) expected += ", " + std::to_string(s);
    throw ShapeError(error_prefix(op) + "Given normalized_shape=" + list_text(normalized_shape) + ", expected input with shape " +
                     expected + "], but got input of size" + nn::detail::shape_text(input.shape()));
  }
  Shape dims;
  for (int64_t i = rank - d; i < rank; ++i) dims.push_back(i);
  return dims;
}

void check_affine(const char* op, const char* what, const Tensor& t, const std::vector<int64_t>& normalized_shape) {
  if (!t.defined() || t.shape() == Shape(normalized_shape)) return;
  throw ShapeError(error_prefix(op) + "Expected " + what + " to be of same shape as normalized_shape, but got " + what +
                   " of shape " + nn::detail::shape_text(t.shape()) + " and normalized_shape = " + list_text(normalized_shape));
}

void check_floating(const char* op, const Tensor& input) {
  if (!is_floating_point(input.dtype()))
    throw DTypeError(error_prefix(op) + "expects a floating point input, got " + std::string(dtype_name(input.dtype())));
}


}  // namespace

Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& o) {
  const ops::PublicOp op("layer_norm", {{input, "input"}, {o.weight(), "weight"}, {o.bias(), "bias"}});
  check_floating("layer_norm", input);
  const Shape dims = trailing_dims("layer_norm", input, o.normalized_shape());
  check_affine("layer_norm", "weight", o.weight(), o.normalized_shape());
  check_affine("layer_norm", "bias", o.bias(), o.normalized_shape());
  return ops::layer_norm(input, o.weight(), o.bias(), dims, o.eps());
}

Tensor rms_norm(const Tensor& input, const RMSNormFuncOptions& o) {
  const ops::PublicOp op("rms_norm", {{input, "input"}, {o.weight(), "weight"}});
  check_floating("rms_norm", input);
  const Shape dims = trailing_dims("rms_norm", input, o.normalized_shape());
  check_affine("rms_norm", "weight", o.weight(), o.normalized_shape());
  return ops::rms_norm(input, o.weight(), dims, o.eps());
}

}  // namespace functional

namespace {

// LayerNorm's and RMSNorm's parameters: normalized_shape, whose sizes are checked first.
AffineShape normalized_shape_parameters(const char* layer, const std::vector<int64_t>& normalized_shape, bool learnable) {
  for (int64_t s : normalized_shape)
    if (s < 0)
      throw ValueError(std::string(layer) + ": normalized_shape has a negative size: " + functional::tuple_repr(normalized_shape));
  return {Shape(normalized_shape), learnable};
}

}  // namespace

AffineShape LayerNormImpl::affine_shape(const LayerNormOptions& o) {
  return normalized_shape_parameters("LayerNorm", o.normalized_shape(), o.elementwise_affine());
}

AffineShape RMSNormImpl::affine_shape(const RMSNormOptions& o) {
  return normalized_shape_parameters("RMSNorm", o.normalized_shape(), o.elementwise_affine());
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return functional::layer_norm(input, functional::LayerNormFuncOptions(options.normalized_shape())
                                           .weight(weight)
                                           .bias(bias)
                                           .eps(options.eps()));
}

std::string LayerNormImpl::extra_repr() const {
  return functional::tuple_repr(options.normalized_shape()) + ", eps=" + detail::python_float(options.eps()) +
         ", elementwise_affine=" + (options.elementwise_affine() ? "True" : "False");
}

Tensor RMSNormImpl::forward(const Tensor& input) {
  return functional::rms_norm(input, functional::RMSNormFuncOptions(options.normalized_shape()).weight(weight).eps(options.eps()));
}

std::string RMSNormImpl::extra_repr() const {
  return functional::tuple_repr(options.normalized_shape()) +
         ", eps=" + (options.eps() ? detail::python_float(*options.eps()) : std::string("None")) +
         ", elementwise_affine=" + (options.elementwise_affine() ? "True" : "False");
}

}  // namespace locus::nn
