// linear and dropout: the layers' arithmetic behind a PublicOp (Note [Public op names]),
// so Linear and Dropout report their own names when they call these. Linear's product, bias and
// activation are one kernel where the device has it (src/ops/linear.h).

#include "locus/nn/functional.h"

#include "locus/nn_ops.h"

#include <sstream>
#include <string>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/core/public_op.h"
#include "src/nn/linear_activation.h"
#include "src/ops/linear.h"
#include "src/ops/public_op.h"

namespace locus::nn {
namespace {

[[noreturn]] void linear_shape_error(const Tensor& input, const Tensor& weight, const Tensor& bias, const char* why) {
  std::ostringstream os;
  os << detail::error_prefix("linear") << why << ": input " << input.shape() << ", weight " << weight.shape();
  if (bias.defined()) os << ", bias " << bias.shape();
  throw ShapeError(os.str());
}

}  // namespace

Tensor linear_with_activation(const Tensor& input, const Tensor& weight, const Tensor& bias, ops::Epilogue epilogue) {
  const ops::PublicOp op("linear", {{input, "input"}, {weight, "weight"}, {bias, "bias"}});
  if (weight.dim() != 2) linear_shape_error(input, weight, bias, "expects a 2-D weight [out_features, in_features]");
  if (input.dim() == 0) linear_shape_error(input, weight, bias, "expects an input with at least one dimension");
  if (input.size(-1) != weight.size(1))
    linear_shape_error(input, weight, bias, "expects the input's last dimension to be the weight's in_features (dim 1)");
  if (bias.defined() && !(bias.shape() == Shape{weight.size(0)}))
    linear_shape_error(input, weight, bias, "expects a bias of shape [out_features] (the weight's dim 0)");
  return ops::linear(input, weight, bias, epilogue);
}

}  // namespace locus::nn

namespace locus {

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  return nn::linear_with_activation(input, weight, bias, ops::Epilogue::None);
}

Tensor dropout(const Tensor& input, double p, bool training) {
  const ops::PublicOp op("dropout", {{input, "input"}});
  if (!(p >= 0 && p <= 1))
    throw ValueError(detail::error_prefix("dropout") + "probability has to be between 0 and 1, but got " +
                     std::to_string(p));
  if (!training || p == 0) return input;
  if (!is_floating_point(input.dtype()))
    throw DTypeError(detail::error_prefix("dropout") + "needs a floating input, got " +
                     std::string(dtype_name(input.dtype())) + "; convert with .to(kFloat32)");
  if (p == 1) return mul(input, 0.0);  // as PyTorch: every element dropped, the graph kept
  const TensorOptions like = TensorOptions().dtype(input.dtype()).device(input.device());
  const Tensor keep = ge(rand(input.shape(), like), p).to(input.dtype());
  return mul(input, mul(keep, 1.0 / (1.0 - p)));
}

}  // namespace locus

namespace locus::nn::functional {

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) { return locus::linear(input, weight, bias); }

Tensor dropout(const Tensor& input, const DropoutFuncOptions& options) {
  return locus::dropout(input, options.p(), options.training());
}

}  // namespace locus::nn::functional
