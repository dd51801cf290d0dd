// Layer and RMS normalisation over trailing dims: the fused kernel where the device has one
// (Note [Fused layer norm]), else composed of reductions and elementwise ops (whose gradients
// are the composition's, exact). Statistics of float16/bfloat16 inputs are computed in float32,
// as PyTorch's kernels accumulate.

#include "locus/nn/layer_norm.h"

#include <string>
#include <vector>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/node.h"
#include "src/core/public_op.h"
#include "src/nn/conv_geometry.h"
#include "src/nn/python_repr.h"
#include "src/ops/autocast.h"
#include "src/ops/dispatch.h"
#include "src/ops/fused.h"
#include "src/ops/kernel_operand.h"
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

DType stats_dtype(DType d) { return d == DType::Float16 || d == DType::BFloat16 ? DType::Float32 : d; }

void check_floating(const char* op, const Tensor& input) {
  if (!is_floating_point(input.dtype()))
    throw DTypeError(error_prefix(op) + "expects a floating point input, got " + std::string(dtype_name(input.dtype())));
}

// The machine epsilon of a floating dtype, torch.finfo(dtype).eps.
double machine_epsilon(DType dtype) {
  switch (dtype) {
    case DType::Float16: return 0.0009765625;     // 2^-10
    case DType::BFloat16: return 0.0078125;       // 2^-7
    case DType::Float64: return 2.220446049250313e-16;
    default: return 1.1920928955078125e-07;        // 2^-23
  }
}

// Note [Fused layer norm]
// Where the device has KernelTable::layer_norm (the CPU's, cpu_layer_norm.cpp), layer_norm and
// rms_norm are one node over the input seen as [rows, cols] (cols: the normalized elements): the
// forward is one kernel call that keeps each row's mean and rstd, the backward one call that
// gives the input's, weight's and bias's gradients,
//   grad_x = rstd (g w - mean(g w) - xhat mean(g w xhat))     (rms: without the mean(g w) term)
//   grad_w = sum over rows of g xhat,  grad_b = sum over rows of g.
// Elsewhere (sim configured without "layer_norm" or "rms_norm"; tests compare the two) they are
// the composition of reductions and elementwise ops, whose gradient is the composition's. The
// composition recorded op by op kept eight full-size intermediates. The fused node is not
// differentiable twice, as batch norm's.

const ops::KernelTable* fused_norm(Device device, DType compute, bool rms) {
  return ops::fused_kernels(&ops::KernelTable::layer_norm, device, compute, {rms ? ops::OpId::RmsNorm : ops::OpId::LayerNorm});
}

// `sizes` with the operands both passes read bound from the tensors they live in: x, the
// optional weight and bias, and the rows' statistics (the forward's results, the backward's inputs).
ops::LayerNormArgs with_operands(ops::LayerNormArgs sizes, const Tensor& x, const Tensor& w, const Tensor& b,
                                 const Tensor& mean, const Tensor& rstd) {
  sizes.x = ops::dense_operand(x, "input");
  sizes.weight = ops::dense_operand(w, "weight");
  sizes.bias = ops::dense_operand(b, "bias");
  sizes.mean = ops::dense_result(mean, "mean");
  sizes.rstd = ops::dense_result(rstd, "rstd");
  return sizes;
}

// The fused path: y in the input's dtype, with its gradient node when recording.
Tensor fused_norm_call(const ops::KernelTable* table, const Tensor& input, const Tensor& weight, const Tensor& bias,
                       int64_t cols, double eps, bool rms) {
  const Device device = input.device();
  const DType compute = stats_dtype(input.dtype());
  const int64_t rows = cols ? input.numel() / cols : 0;
  Tensor x, w, b;
  {
    NoGradGuard no_grad;
    x = input.to(compute).contiguous();
    if (weight.defined()) w = weight.to(compute).contiguous();
    if (bias.defined()) b = bias.to(compute).contiguous();
  }
  const Tensor y = ops::empty_on(x.shape(), compute, device);
  const Tensor mean = ops::empty_on(Shape{rows}, compute, device), rstd = ops::empty_on(Shape{rows}, compute, device);
  ops::LayerNormArgs sizes;  // no operands: each pass binds its own (Note [Kernel operands])
  sizes.device = device.is_cpu() ? 0 : device.index();
  sizes.dtype = compute, sizes.rms = rms, sizes.rows = rows, sizes.cols = cols, sizes.eps = eps;
  ops::LayerNormArgs args = with_operands(sizes, x, w, b, mean, rstd);
  args.y = ops::dense_result(y);
  for (const Tensor* t : {&x, &w, &b})
    if (t->defined()) ops::wait_for_host(*t);
  table->layer_norm(args);
  const Tensor result = y.to(input.dtype());
  std::vector<Tensor> inputs{input};
  if (weight.defined()) inputs.push_back(weight);
  if (bias.defined()) inputs.push_back(bias);
  if (!autograd::needs_grad(inputs)) return result;
  const DType input_dtype = input.dtype(), weight_dtype = weight.defined() ? weight.dtype() : compute,
              bias_dtype = bias.defined() ? bias.dtype() : compute;
  autograd::record(result, rms ? "FusedRmsNormBackward0" : "NativeLayerNormBackward0",
                   [=](const Tensor& grad) -> std::vector<Tensor> {
                     const Tensor g = grad.to(compute).contiguous();
                     const Tensor gx = ops::empty_on(x.shape(), compute, device);
                     const Tensor gw = w.defined() ? ops::empty_on(w.shape(), compute, device) : Tensor();
                     const Tensor gb = b.defined() ? ops::empty_on(b.shape(), compute, device) : Tensor();
                     ops::LayerNormArgs back = with_operands(sizes, x, w, b, mean, rstd);
                     back.pass = ops::LayerNormArgs::Pass::Backward;
                     back.grad_out = ops::dense_operand(g);
                     back.grad_input = ops::dense_result(gx);
                     back.grad_weight = ops::dense_result(gw);
                     back.grad_bias = ops::dense_result(gb);
                     ops::wait_for_host(g);
                     table->layer_norm(back);
                     std::vector<Tensor> grads{gx.to(input_dtype)};
                     if (gw.defined()) grads.push_back(gw.to(weight_dtype));
                     if (gb.defined()) grads.push_back(gb.to(bias_dtype));
                     return grads;
                   },
                   inputs);
  return result;
}

int64_t normalized_count(const std::vector<int64_t>& normalized_shape) {
  int64_t n = 1;
  for (int64_t s : normalized_shape) n *= s;
  return n;
}

}  // namespace

Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& o) {
  const ops::PublicOp op("layer_norm", {{input, "input"}, {o.weight(), "weight"}, {o.bias(), "bias"}});
  if (ops::autocast_active())
    return ops::autocast(
        ops::OpId::LayerNorm,
        [&o](const Tensor& x, const Tensor& w, const Tensor& b) { return layer_norm(x, LayerNormFuncOptions(o).weight(w).bias(b)); },
        input, o.weight(), o.bias());
  check_floating("layer_norm", input);
  const Shape dims = trailing_dims("layer_norm", input, o.normalized_shape());
  check_affine("layer_norm", "weight", o.weight(), o.normalized_shape());
  check_affine("layer_norm", "bias", o.bias(), o.normalized_shape());
  const DType compute = stats_dtype(input.dtype());
  if (const ops::KernelTable* table = fused_norm(input.device(), compute, false); table && input.numel() > 0)
    return fused_norm_call(table, input, o.weight(), o.bias(), normalized_count(o.normalized_shape()), o.eps(), false);
  const Tensor x = input.to(compute);
  const Tensor centered = sub(x, mean(x, dims, true));
  const Tensor var = mean(mul(centered, centered), dims, true);
  Tensor y = mul(centered, rsqrt(add(var, o.eps())));
  if (o.weight().defined()) y = mul(y, o.weight().to(compute));
  if (o.bias().defined()) y = add(y, o.bias().to(compute));
  return y.to(input.dtype());
}

Tensor rms_norm(const Tensor& input, const RMSNormFuncOptions& o) {
  const ops::PublicOp op("rms_norm", {{input, "input"}, {o.weight(), "weight"}});
  if (ops::autocast_active())
    return ops::autocast(
        ops::OpId::RmsNorm, [&o](const Tensor& x, const Tensor& w) { return rms_norm(x, RMSNormFuncOptions(o).weight(w)); },
        input, o.weight());
  check_floating("rms_norm", input);
  const Shape dims = trailing_dims("rms_norm", input, o.normalized_shape());
  check_affine("rms_norm", "weight", o.weight(), o.normalized_shape());
  const DType compute = stats_dtype(input.dtype());
  const double eps = o.eps().value_or(machine_epsilon(input.dtype()));
  if (const ops::KernelTable* table = fused_norm(input.device(), compute, true); table && input.numel() > 0)
    return fused_norm_call(table, input, o.weight(), Tensor(), normalized_count(o.normalized_shape()), eps, true);
  const Tensor x = input.to(compute);
  Tensor y = mul(x, rsqrt(add(mean(mul(x, x), dims, true), eps)));
  if (o.weight().defined()) y = mul(y, o.weight().to(compute));
  return y.to(input.dtype());
}

}  // namespace functional

namespace {

void check_sizes(const char* layer, const std::vector<int64_t>& normalized_shape) {
  for (int64_t s : normalized_shape)
    if (s < 0)
      throw ValueError(std::string(layer) + ": normalized_shape has a negative size: " + functional::tuple_repr(normalized_shape));
}

Shape shape_of(const std::vector<int64_t>& v) { return Shape(v); }

}  // namespace

LayerNormImpl::LayerNormImpl(const LayerNormOptions& o) : options(o) {
  check_sizes("LayerNorm", o.normalized_shape());
  reset();
}

void LayerNormImpl::reset() {
  const Shape s = shape_of(options.normalized_shape());
  weight = options.elementwise_affine() ? register_parameter("weight", ones(s)) : Tensor();
  bias = options.elementwise_affine() ? register_parameter("bias", zeros(s)) : Tensor();
}

void LayerNormImpl::reset_parameters() {
  if (!options.elementwise_affine()) return;
  NoGradGuard no_grad;
  weight.fill_(1);
  bias.zero_();
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

RMSNormImpl::RMSNormImpl(const RMSNormOptions& o) : options(o) {
  check_sizes("RMSNorm", o.normalized_shape());
  reset();
}

void RMSNormImpl::reset() {
  weight = options.elementwise_affine() ? register_parameter("weight", ones(shape_of(options.normalized_shape()))) : Tensor();
}

void RMSNormImpl::reset_parameters() {
  if (!options.elementwise_affine()) return;
  NoGradGuard no_grad;
  weight.fill_(1);
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
