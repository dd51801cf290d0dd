// F::batch_norm, group_norm, instance_norm and dropout2d, composed of reductions and
// elementwise ops (their gradients are the exact ones of the composition). Statistics of
// float16/bfloat16 inputs are computed in float32, as PyTorch's kernels accumulate.

#include <cmath>
#include <string>
#include <vector>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/functional/normalization.h"
#include "locus/nn/normalization.h"
#include "locus/ops.h"
#include "src/autograd/node.h"
#include "src/core/public_op.h"
#include "src/nn/python_repr.h"
#include "src/ops/autocast.h"
#include "src/ops/normalization.h"
#include "src/ops/public_op.h"

namespace locus::nn {
namespace functional {
namespace {

using locus::detail::error_prefix;



void check_channels(const char* op, const char* what, const Tensor& t, int64_t c) {
  if (t.defined() && t.numel() != c)
    throw ShapeError(error_prefix(op) + std::string(what) + " should contain " + std::to_string(c) + " elements not " +
                     std::to_string(t.numel()));
}

std::string size_text(const Tensor& t) { return nn::detail::shape_text(t.shape()); }

Tensor affine(Tensor y, const Tensor& weight, const Tensor& bias, int64_t rank) {
  if (weight.defined()) y = mul(y, ops::per_channel(weight, rank, y.dtype()));
  if (bias.defined()) y = add(y, ops::per_channel(bias, rank, y.dtype()));
  return y;
}


}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& o) {
  const ops::PublicOp op("batch_norm", {{input, "input"}, {running_mean, "running_mean"}, {running_var, "running_var"},
                                         {o.weight(), "weight"}, {o.bias(), "bias"}});
  if (input.dim() < 2) throw ShapeError(error_prefix("batch_norm") + "expected an input of at least 2 dims [N, C, ...], got " + size_text(input));
  if (!is_floating_point(input.dtype()))
    throw DTypeError(error_prefix("batch_norm") + "expects a floating point input, got " + std::string(dtype_name(input.dtype())));
  const int64_t c = input.size(1), rank = input.dim();
  check_channels("batch_norm", "running_mean", running_mean, c);
  check_channels("batch_norm", "running_var", running_var, c);
  check_channels("batch_norm", "weight", o.weight(), c);
  check_channels("batch_norm", "bias", o.bias(), c);
  Shape dims{0};
  for (int64_t d = 2; d < rank; ++d) dims.push_back(d);
  const DType compute = ops::statistics_dtype(input.dtype());
  if (o.training()) {
    int64_t n = input.size(0);  // the values per channel, counted from the shape (the batch may be empty)
    for (int64_t d = 2; d < rank; ++d) n *= input.size(d);
    if (n == 1) {
      std::string shape = size_text(input);
      throw ValueError(error_prefix("batch_norm") + "Expected more than 1 value per channel when training, got input size torch.Size(" +
                       shape + ")");
    }
    // An empty input normalizes nothing: as PyTorch, an empty result, the running statistics as
    // they were, and zero gradients for weight and bias.
    if (n == 0 || c == 0) return affine(input.to(compute), o.weight(), o.bias(), rank).to(input.dtype());
    return ops::batch_norm_training(input, o.weight(), o.bias(), running_mean, running_var, o.momentum(), o.eps(), dims, n);
  }
  if (!running_mean.defined() || !running_var.defined())
    throw ValueError(error_prefix("batch_norm") + "running_mean and running_var must be defined when not training");
  // One pass over the input, y = x scale + shift with per-channel scale = weight / sqrt(var + eps)
  // and shift = bias - mean scale, as PyTorch's inference kernel; the gradients of input, weight
  // and bias flow through the small per-channel ops and the pass.
  Tensor scale = rsqrt(add(running_var.to(compute), o.eps()));
  if (o.weight().defined()) scale = mul(scale, o.weight().to(compute));
  Tensor shift = neg(mul(running_mean.to(compute), scale));
  if (o.bias().defined()) shift = add(shift, o.bias().to(compute));
  return ops::channel_affine(input.to(compute), scale, shift).to(input.dtype());
}

Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& o) {
  const ops::PublicOp op("group_norm", {{input, "input"}, {o.weight(), "weight"}, {o.bias(), "bias"}});
  if (ops::autocast_active())
    return ops::autocast(
        ops::OpId::GroupNorm,
        [&o](const Tensor& x, const Tensor& w, const Tensor& b) { return group_norm(x, GroupNormFuncOptions(o).weight(w).bias(b)); },
        input, o.weight(), o.bias());
  if (input.dim() < 2) throw ShapeError(error_prefix("group_norm") + "expected an input of at least 2 dims [N, C, ...], got " + size_text(input));
  if (!is_floating_point(input.dtype()))
    throw DTypeError(error_prefix("group_norm") + "expects a floating point input, got " + std::string(dtype_name(input.dtype())));
  const int64_t n = input.size(0), c = input.size(1), g = o.num_groups();
  if (g <= 0 || c % g != 0)
    throw ShapeError(error_prefix("group_norm") + "Expected number of channels in input to be divisible by num_groups, but got input of shape " +
                     size_text(input) + " and num_groups=" + std::to_string(g));
  check_channels("group_norm", "weight", o.weight(), c);
  check_channels("group_norm", "bias", o.bias(), c);
  int64_t per_group = c / g;  // from the shape, not -1: an empty batch leaves -1 undetermined
  for (int64_t d = 2; d < input.dim(); ++d) per_group *= input.size(d);
  const Tensor x = input.to(ops::statistics_dtype(input.dtype())).reshape({n, g, per_group});
  auto [var, mean] = var_mean(x, Shape{2}, false, true);
  const Tensor y = mul(sub(x, mean), rsqrt(add(var, o.eps()))).reshape(input.shape());
  return affine(y, o.weight(), o.bias(), input.dim()).to(input.dtype());
}

Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& o) {
  const ops::PublicOp op("instance_norm", {{input, "input"}, {o.running_mean(), "running_mean"}, {o.running_var(), "running_var"},
                                            {o.weight(), "weight"}, {o.bias(), "bias"}});
  if (input.dim() < 3) throw ShapeError(error_prefix("instance_norm") + "expected an input of at least 3 dims [N, C, ...], got " + size_text(input));
  if (!is_floating_point(input.dtype()))
    throw DTypeError(error_prefix("instance_norm") + "expects a floating point input, got " + std::string(dtype_name(input.dtype())));
  const int64_t c = input.size(1), rank = input.dim();
  check_channels("instance_norm", "running_mean", o.running_mean(), c);
  check_channels("instance_norm", "running_var", o.running_var(), c);
  check_channels("instance_norm", "weight", o.weight(), c);
  check_channels("instance_norm", "bias", o.bias(), c);
  const DType compute = ops::statistics_dtype(input.dtype());
  const Tensor x = input.to(compute);
  Tensor y;
  if (o.use_input_stats()) {
    Shape dims;
    for (int64_t d = 2; d < rank; ++d) dims.push_back(d);
    int64_t n = 1;  // an instance's spatial elements, from the shape (the batch may be empty)
    for (int64_t d = 2; d < rank; ++d) n *= input.size(d);
    if (n <= 1)
      throw ValueError(error_prefix("instance_norm") + "Expected more than 1 spatial element when training, got input size torch.Size(" +
                       size_text(input) + ")");
    auto [var, mean] = var_mean(x, dims, false, true);
    y = mul(sub(x, mean), rsqrt(add(var, o.eps())));
    // PyTorch's instance norm is batch norm over [1, N C, ...]: each running statistic moves
    // towards the batch's mean of the instances' statistics.
    if (o.running_mean().defined())
      ops::update_running(o.running_mean(), mean.detach().reshape({input.size(0), c}).mean(0), o.momentum());
    if (o.running_var().defined())
      ops::update_running(o.running_var(),
                     mul(var.detach().reshape({input.size(0), c}).mean(0), static_cast<double>(n) / static_cast<double>(n - 1)),
                     o.momentum());
  } else {
    if (!o.running_mean().defined() || !o.running_var().defined())
      throw ValueError(error_prefix("instance_norm") + "Expected running_mean and running_var to be defined when use_input_stats is false");
    y = mul(sub(x, ops::per_channel(o.running_mean(), rank, compute)), rsqrt(add(ops::per_channel(o.running_var(), rank, compute), o.eps())));
  }
  return affine(y, o.weight(), o.bias(), rank).to(input.dtype());
}

Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& o) {
  const ops::PublicOp op("dropout2d", {{input, "input"}});
  const double p = o.p();
  if (!(p >= 0 && p <= 1))
    throw ValueError(error_prefix("dropout2d") + "dropout probability has to be between 0 and 1, but got " + nn::detail::python_float(p));
  if (input.dim() < 2) throw ShapeError(error_prefix("dropout2d") + "expected an input of at least 2 dims [N, C, ...], got " + size_text(input));
  if (!o.training() || p == 0) return input;
  if (!is_floating_point(input.dtype()))
    throw DTypeError(error_prefix("dropout2d") + "needs a floating input, got " + std::string(dtype_name(input.dtype())));
  if (p == 1) return mul(input, 0.0);
  Shape mask_shape(static_cast<size_t>(input.dim()), 1);
  mask_shape[0] = input.size(0), mask_shape[1] = input.size(1);
  const TensorOptions like = TensorOptions().dtype(input.dtype()).device(input.device());
  const Tensor keep = ge(rand(mask_shape, like), p).to(input.dtype());
  return mul(input, mul(keep, 1.0 / (1.0 - p)));
}

}  // namespace functional

}  // namespace locus::nn
