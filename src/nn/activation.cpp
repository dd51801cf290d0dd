// The activation modules and torch.nn.functional's activation functions (activation.h): each
// one call of an elementwise op (elementwise.h), in place when its options say so.

#include "locus/nn/activation.h"

#include <cmath>
#include <string>

#include "locus/errors.h"
#include "locus/ops.h"
#include "src/nn/python_repr.h"

namespace locus::nn {
namespace {

using detail::python_float;

// Softplus's defaults are the Python ints 1 and 20, which print without ".0": a whole value
// prints as an int, so the default module prints as PyTorch's does.
std::string python_number(double v) {
  if (std::nearbyint(v) == v && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  return python_float(v);
}

std::string inplace_suffix(bool inplace, bool first) {
  if (!inplace) return {};
  return first ? "inplace=True" : ", inplace=True";
}

}  // namespace

namespace detail {

std::string leaky_relu_repr(const LeakyReLUOptions& options) {
  return "negative_slope=" + python_float(options.negative_slope()) + inplace_suffix(options.inplace(), false);
}

std::string elu_repr(const ELUOptions& options) {
  return "alpha=" + python_float(options.alpha()) + inplace_suffix(options.inplace(), false);
}

std::string selu_repr(const SELUOptions& options) { return inplace_suffix(options.inplace(), true); }

std::string softplus_repr(const SoftplusOptions& options) {
  return "beta=" + python_number(options.beta()) + ", threshold=" + python_number(options.threshold());
}

std::string hardtanh_repr(const HardtanhOptions& options) {
  return "min_val=" + python_float(options.min_val()) + ", max_val=" + python_float(options.max_val()) +
         inplace_suffix(options.inplace(), false);
}

std::string relu_repr(const ReLUOptions& options) { return inplace_suffix(options.inplace(), true); }
std::string relu6_repr(const ReLU6Options& options) { return inplace_suffix(options.inplace(), true); }

}  // namespace detail

HardtanhImpl::HardtanhImpl(const HardtanhOptions& options_) : FunctionalModule(options_) {
  if (!(options.max_val() > options.min_val()))
    throw ValueError("Hardtanh: max_val must be greater than min_val, got min_val=" + python_float(options.min_val()) +
                     " and max_val=" + python_float(options.max_val()));
}

namespace functional {

Tensor relu(Tensor input, const ReLUFuncOptions& options) {
  if (options.inplace()) return input.relu_();
  return locus::relu(input);
}

Tensor gelu(const Tensor& input, const GELUFuncOptions& options) { return locus::gelu(input, options.approximate()); }

Tensor leaky_relu(Tensor input, const LeakyReLUFuncOptions& options) {
  if (options.inplace()) return locus::leaky_relu_(input, options.negative_slope());
  return locus::leaky_relu(input, options.negative_slope());
}

Tensor elu(Tensor input, const ELUFuncOptions& options) {
  if (options.inplace()) return locus::elu_(input, options.alpha());
  return locus::elu(input, options.alpha());
}

Tensor selu(Tensor input, const SELUFuncOptions& options) {
  if (options.inplace()) return locus::selu_(input);
  return locus::selu(input);
}

Tensor silu(const Tensor& input) { return locus::silu(input); }
Tensor mish(const Tensor& input) { return locus::mish(input); }

Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options) {
  return locus::softplus(input, options.beta(), options.threshold());
}

Tensor hardtanh(Tensor input, const HardtanhFuncOptions& options) {
  if (options.inplace()) return locus::hardtanh_(input, options.min_val(), options.max_val());
  return locus::hardtanh(input, options.min_val(), options.max_val());
}

Tensor relu6(Tensor input, const ReLU6FuncOptions& options) {
  if (options.inplace()) return locus::relu6_(input);
  return locus::relu6(input);
}

Tensor hardsigmoid(const Tensor& input) { return locus::hardsigmoid(input); }
Tensor hardswish(const Tensor& input) { return locus::hardswish(input); }
Tensor logsigmoid(const Tensor& input) { return locus::logsigmoid(input); }
Tensor sigmoid(const Tensor& input) { return locus::sigmoid(input); }
Tensor tanh(const Tensor& input) { return locus::tanh(input); }

Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options) {
  const Tensor x = options.dtype() ? input.to(*options.dtype()) : input;
  return locus::softmax(x, options.dim());
}

Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options) {
  const Tensor x = options.dtype() ? input.to(*options.dtype()) : input;
  return locus::log_softmax(x, options.dim());
}

}  // namespace functional
}  // namespace locus::nn
