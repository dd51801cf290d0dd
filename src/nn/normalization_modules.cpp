// The normalisation layers (BatchNorm1d/2d, InstanceNorm2d, GroupNorm) and Dropout2d: their
// parameters and running statistics under PyTorch's state_dict names, and their forward through
// the functional forms of normalization.cpp.

#include <sstream>
#include <string>
#include <utility>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/functional/normalization.h"
#include "locus/nn/normalization.h"
#include "locus/ops.h"
#include "src/nn/python_repr.h"
#include "src/nn/train_mode_warning.h"

namespace locus::nn {

BufferTensor& BufferTensor::operator=(const Tensor& values) {
  if (!defined()) throw ValueError("BufferTensor: this buffer is not registered (the layer tracks no running statistics)");
  if (!(values.shape() == shape())) {
    std::ostringstream os;
    os << "BufferTensor: assigning a tensor of shape " << values.shape() << " to a buffer of shape " << shape()
       << " (assignment copies into the registered buffer)";
    throw ShapeError(os.str());
  }
  NoGradGuard no_grad;
  copy_(values);
  return *this;
}

void NormBase::register_state(const Registrar& r) {
  const int64_t c = options.num_features();
  if (c <= 0) throw ValueError("num_features must be positive, got " + std::to_string(c));
  weight = options.affine() ? r.parameter("weight", ones({c})) : Tensor();
  bias = options.affine() ? r.parameter("bias", zeros({c})) : Tensor();
  if (options.track_running_stats()) {
    running_mean.bind(r.buffer("running_mean", zeros({c})));
    running_var.bind(r.buffer("running_var", ones({c})));
    num_batches_tracked.bind(r.buffer("num_batches_tracked", zeros(Shape{}, TensorOptions().dtype(DType::Int64))));
  } else {
    running_mean.bind(Tensor()), running_var.bind(Tensor()), num_batches_tracked.bind(Tensor());
  }
}

void NormBase::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

void NormBase::reset_parameters_impl() {
  reset_running_stats();
  if (!options.affine()) return;
  NoGradGuard no_grad;
  weight.fill_(1);
  bias.zero_();
}

Tensor NormBase::normalize(const Tensor& input, bool training, bool instance, const char* layer) {
  if (training) detail::warn_if_training_without_grad(layer);
  double momentum = options.momentum().value_or(0.0);
  if (training && options.track_running_stats()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
    // momentum=None: the cumulative average, 1 / batches seen (a read of the count, as PyTorch).
    if (!options.momentum()) momentum = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>());
  }
  const bool use_batch_stats = training || !options.track_running_stats();
  const bool pass_running = !training || options.track_running_stats();
  const Tensor rm = pass_running ? Tensor(running_mean) : Tensor(), rv = pass_running ? Tensor(running_var) : Tensor();
  if (instance)
    return functional::instance_norm(input, functional::InstanceNormFuncOptions()
                                                .running_mean(rm)
                                                .running_var(rv)
                                                .weight(weight)
                                                .bias(bias)
                                                .use_input_stats(use_batch_stats)
                                                .momentum(momentum)
                                                .eps(options.eps()));
  return functional::batch_norm(input, use_batch_stats && !options.track_running_stats() ? Tensor() : rm,
                                use_batch_stats && !options.track_running_stats() ? Tensor() : rv,
                                functional::BatchNormFuncOptions()
                                    .weight(weight)
                                    .bias(bias)
                                    .training(use_batch_stats)
                                    .momentum(momentum)
                                    .eps(options.eps()));
}

std::string NormBase::repr_fields() const {
  return std::to_string(options.num_features()) + ", eps=" + detail::python_float(options.eps()) + ", momentum=" +
         (options.momentum() ? detail::python_float(*options.momentum()) : std::string("None")) +
         ", affine=" + (options.affine() ? "True" : "False") +
         ", track_running_stats=" + (options.track_running_stats() ? "True" : "False");
}

Tensor BatchNorm1dImpl::forward(const Tensor& input) {
  if (input.dim() != 2 && input.dim() != 3)
    throw ValueError("BatchNorm1d: expected 2D or 3D input (got " + std::to_string(input.dim()) + "D input)");
  return normalize(input, is_training(), false, "BatchNorm1d");
}

Tensor BatchNorm2dImpl::forward(const Tensor& input) {
  if (input.dim() != 4) throw ValueError("BatchNorm2d: expected 4D input (got " + std::to_string(input.dim()) + "D input)");
  return normalize(input, is_training(), false, "BatchNorm2d");
}

Tensor InstanceNorm2dImpl::forward(const Tensor& input) {
  if (input.dim() != 3 && input.dim() != 4)
    throw ValueError("InstanceNorm2d: expected 3D or 4D input (got " + std::to_string(input.dim()) + "D input)");
  if (input.dim() == 3) return normalize(input.unsqueeze(0), is_training(), true, "InstanceNorm2d").squeeze(0);
  return normalize(input, is_training(), true, "InstanceNorm2d");
}

AffineShape GroupNormImpl::affine_shape(const GroupNormOptions& o) {
  if (o.num_groups() <= 0 || o.num_channels() <= 0) throw ValueError("GroupNorm: num_groups and num_channels must be positive");
  if (o.num_channels() % o.num_groups() != 0) throw ValueError("GroupNorm: num_channels must be divisible by num_groups");
  return {Shape{o.num_channels()}, o.affine()};
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  return functional::group_norm(input, functional::GroupNormFuncOptions(options.num_groups()).weight(weight).bias(bias).eps(options.eps()));
}

std::string GroupNormImpl::extra_repr() const {
  return std::to_string(options.num_groups()) + ", " + std::to_string(options.num_channels()) +
         ", eps=" + detail::python_float(options.eps()) + ", affine=" + (options.affine() ? "True" : "False");
}

Dropout2dImpl::Dropout2dImpl(const Dropout2dOptions& o) : OptionsModule(o) {
  if (!(o.p() >= 0 && o.p() <= 1))
    throw ValueError("Dropout2d: dropout probability has to be between 0 and 1, but got " + detail::python_float(o.p()));
}

Tensor Dropout2dImpl::forward(const Tensor& input) {
  if (is_training()) detail::warn_if_training_without_grad("Dropout2d");
  return functional::dropout2d(input, functional::Dropout2dFuncOptions(options.p()).training(is_training()));
}

std::string Dropout2dImpl::extra_repr() const { return "p=" + detail::python_float(options.p()) + ", inplace=False"; }

}  // namespace locus::nn
