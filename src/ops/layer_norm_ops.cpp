// Layer and RMS normalisation over trailing dims: the fused kernel where the device has one
// (Note [Fused layer norm]), else composed of reductions and elementwise ops (whose gradients
// are the composition's, exact). Statistics of float16/bfloat16 inputs are computed in float32,
// as PyTorch's kernels accumulate.

#include <optional>
#include <vector>

#include "locus/autograd.h"
#include "locus/ops.h"
#include "src/autograd/node.h"
#include "src/core/device_ordinal.h"
#include "src/ops/autocast.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/normalization.h"
#include "src/ops/structured_call.h"

namespace locus::ops {
namespace {

// The machine epsilon of a floating dtype, torch.finfo(dtype).eps: rms_norm's default eps.
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

// `sizes` with the operands both passes read bound from the tensors they live in: x, the
// optional weight and bias, and the rows' statistics (the forward's results, the backward's inputs).
LayerNormArgs with_operands(LayerNormArgs sizes, const Tensor& x, const Tensor& w, const Tensor& b,
                                 const Tensor& mean, const Tensor& rstd) {
  sizes.x = dense_operand(x, "input");
  sizes.weight = dense_operand(w, "weight");
  sizes.bias = dense_operand(b, "bias");
  sizes.mean = dense_result(mean, "mean");
  sizes.rstd = dense_result(rstd, "rstd");
  return sizes;
}

// The fused path: y in the input's dtype, with its gradient node when recording.
// The norms composed of reductions and elementwise ops: the path without a fused kernel, and
// the fused kernel's double backward (Note [Double backward] in src/autograd/node.cpp).
Tensor composed_layer_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& dims, double eps) {
  const DType compute = statistics_dtype(input.dtype());
  const Tensor x = input.to(compute);
  const Tensor centered = sub(x, mean(x, dims, true));
  const Tensor var = mean(mul(centered, centered), dims, true);
  Tensor y = mul(centered, rsqrt(add(var, eps)));
  if (weight.defined()) y = mul(y, weight.to(compute));
  if (bias.defined()) y = add(y, bias.to(compute));
  return y.to(input.dtype());
}

Tensor composed_rms_norm(const Tensor& input, const Tensor& weight, const Shape& dims, double eps) {
  const DType compute = statistics_dtype(input.dtype());
  const Tensor x = input.to(compute);
  Tensor y = mul(x, rsqrt(add(mean(mul(x, x), dims, true), eps)));
  if (weight.defined()) y = mul(y, weight.to(compute));
  return y.to(input.dtype());
}

Tensor fused_norm_call(const KernelTable* table, const Tensor& input, const Tensor& weight, const Tensor& bias,
                       const Shape& dims, int64_t cols, double eps, bool rms) {
  const Device device = input.device();
  const DType compute = statistics_dtype(input.dtype());
  const int64_t rows = cols ? input.numel() / cols : 0;
  Tensor x, w, b;
  {
    NoGradGuard no_grad;
    x = input.to(compute).contiguous();
    if (weight.defined()) w = weight.to(compute).contiguous();
    if (bias.defined()) b = bias.to(compute).contiguous();
  }
  const Tensor y = empty_on(x.shape(), compute, device);
  const Tensor mean = empty_on(Shape{rows}, compute, device), rstd = empty_on(Shape{rows}, compute, device);
  LayerNormArgs sizes;  // no operands: each pass binds its own (Note [Kernel operands])
  sizes.device = detail::ordinal(device);
  sizes.dtype = compute, sizes.rms = rms, sizes.rows = rows, sizes.cols = cols, sizes.eps = eps;
  LayerNormArgs args = with_operands(sizes, x, w, b, mean, rstd);
  args.y = dense_result(y);
  for (const Tensor* t : {&x, &w, &b})
    if (t->defined()) wait_for_host(*t);
  table->layer_norm(args);
  const Tensor result = y.to(input.dtype());
  std::vector<Tensor> inputs{input};
  if (weight.defined()) inputs.push_back(weight);
  if (bias.defined()) inputs.push_back(bias);
  if (!autograd::needs_grad(inputs)) return result;
  const DType input_dtype = input.dtype(), weight_dtype = weight.defined() ? weight.dtype() : compute,
              bias_dtype = bias.defined() ? bias.dtype() : compute;
  autograd::FunctionNode& node = autograd::record(result, rms ? "FusedRmsNormBackward0" : "NativeLayerNormBackward0",
                   [=](const Tensor& grad) -> std::vector<Tensor> {
                     const Tensor g = grad.to(compute).contiguous();
                     const Tensor gx = empty_on(x.shape(), compute, device);
                     const Tensor gw = w.defined() ? empty_on(w.shape(), compute, device) : Tensor();
                     const Tensor gb = b.defined() ? empty_on(b.shape(), compute, device) : Tensor();
                     LayerNormArgs back = with_operands(sizes, x, w, b, mean, rstd);
                     back.pass = LayerNormArgs::Pass::Backward;
                     back.grad_out = dense_operand(g);
                     back.grad_input = dense_result(gx);
                     back.grad_weight = dense_result(gw);
                     back.grad_bias = dense_result(gb);
                     wait_for_host(g);
                     table->layer_norm(back);
                     std::vector<Tensor> grads{gx.to(input_dtype)};
                     if (gw.defined()) grads.push_back(gw.to(weight_dtype));
                     if (gb.defined()) grads.push_back(gb.to(bias_dtype));
                     return grads;
                   },
                   inputs, {{x, input}, {w, weight}});
  node.recompute_with(inputs, [dims, eps, rms, has_bias = bias.defined()](const std::vector<Tensor>& in) {
    const Tensor w = in.size() > 1 ? in[1] : Tensor(), b = has_bias ? in[2] : Tensor();
    return rms ? composed_rms_norm(in[0], w, dims, eps) : composed_layer_norm(in[0], w, b, dims, eps);
  });
  return result;
}

int64_t count_over(const Tensor& input, const Shape& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= input.size(d);
  return n;
}

}  // namespace

Tensor layer_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& dims, double eps) {
  if (autocast_active())
    return autocast(
        OpId::LayerNorm, [&](const Tensor& x, const Tensor& w, const Tensor& b) { return layer_norm(x, w, b, dims, eps); },
        input, weight, bias);
  const StructuredCall call(OpId::LayerNorm, {{input, "input"}, {weight, "weight"}, {bias, "bias"}});
  const DType compute = statistics_dtype(input.dtype());
  if (const KernelTable* table = call.fused(&KernelTable::layer_norm, compute); table && input.numel() > 0)
    return fused_norm_call(table, input, weight, bias, dims, count_over(input, dims), eps, false);
  return composed_layer_norm(input, weight, bias, dims, eps);
}

Tensor rms_norm(const Tensor& input, const Tensor& weight, const Shape& dims, std::optional<double> eps_or_default) {
  if (autocast_active())
    return autocast(
        OpId::RmsNorm, [&](const Tensor& x, const Tensor& w) { return rms_norm(x, w, dims, eps_or_default); }, input, weight);
  // After autocast: the default follows the dtype the op computes in, as PyTorch's.
  const double eps = eps_or_default.value_or(machine_epsilon(input.dtype()));
  const StructuredCall call(OpId::RmsNorm, {{input, "input"}, {weight, "weight"}});
  const DType compute = statistics_dtype(input.dtype());
  if (const KernelTable* table = call.fused(&KernelTable::layer_norm, compute); table && input.numel() > 0)
    return fused_norm_call(table, input, weight, Tensor(), dims, count_over(input, dims), eps, true);
  return composed_rms_norm(input, weight, dims, eps);
}

}  // namespace locus::ops
