// Training-mode batch norm as one node (Note [Batch norm in training]), the per-channel affine
// pass that normalises in both modes, and the per-channel helpers the normalisation layers share.

#include <vector>

#include "locus/autograd.h"
#include "locus/ops.h"
#include "src/autograd/node.h"
#include "src/core/device_ordinal.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/normalization.h"
#include "src/ops/structured_call.h"

namespace locus::ops {

DType statistics_dtype(DType d) { return d == DType::Float16 || d == DType::BFloat16 ? DType::Float32 : d; }

Tensor per_channel(const Tensor& t, int64_t rank, DType dtype) {
  Shape s(static_cast<size_t>(rank), 1);
  s[1] = t.numel();
  return t.to(dtype).view(s);
}

void update_running(Tensor running, const Tensor& value, double momentum) {
  NoGradGuard no_grad;
  running.copy_(add(mul(running, 1.0 - momentum), mul(value.to(running.dtype()), momentum)));
}

namespace {

// Note [Batch norm in training]
// Training-mode batch norm is one node, not the composition of its formula: the forward is the
// per-channel statistics, then one addcmul pass y = shift + x scale with scale = weight invstd
// and shift = bias - mean scale; the backward needs two per-channel sums, sum(g) and sum(g x),
// and one pass for the input's gradient:
//   sum(g xhat) = invstd (sum(g x) - mean sum(g))        (weight's gradient; bias's is sum(g))
//   grad_x = g a + x b + c with a = weight invstd, b = -a invstd sum(g xhat) / M,
//            c = -a sum(g) / M - mean b                 (M: elements per channel)
// Where the device has the fused kernel (KernelTable::batch_norm: CPU and CUDA), the statistics
// (two passes over each channel, the second from cache), y itself (the Affine pass), the two
// sums and grad_x are one kernel each; elsewhere (sim configured without "batch_norm", tests
// compare the two) they are ops: sum, sub, mul, sum for the statistics, addcmul for y, sum and
// mul-sum for the sums, two addcmul for grad_x.
// The composition recorded op by op kept a dozen full-size intermediates and ran 4x slower
// (docs/performance.md).

// The layout the fused passes run in: channels-last when `x` is stored so and the backend has
// those passes (Note [Channels-last batch norm]), else contiguous [N, C, ...].
MemoryFormat fused_format(const KernelTable& fused, const Tensor& x) {
  if (!fused.batch_norm_channels_last || x.dim() < 4) return MemoryFormat::Contiguous;
  return x.suggest_memory_format();
}

// A pass of the fused kernel over `x`, dense in `format` ([N, C, ...] or channels-last), with [C]
// results allocated.
struct FusedPass {
  BatchNormArgs args;
  Tensor first, second;
  FusedPass(BatchNormArgs::Pass pass, const Tensor& x, MemoryFormat format) {
    const Device device = x.device();
    args.pass = pass;
    args.device = detail::ordinal(device);
    args.dtype = x.dtype();
    args.n = x.size(0), args.channels = x.size(1), args.inner = x.numel() / (args.n * args.channels);
    args.channels_last = format != MemoryFormat::Contiguous;
    args.x = dense_operand(x, format);
    wait_for_host(x);
    if (pass == BatchNormArgs::Pass::BackwardInput || pass == BatchNormArgs::Pass::Affine) return;
    first = empty_on(Shape{args.channels}, x.dtype(), device);
    second = empty_on(Shape{args.channels}, x.dtype(), device);
    args.first = dense_result(first);
    args.second = dense_result(second);
  }
};

// Training-mode batch norm composed of differentiable ops, without the running statistics:
// the double backward of the node below (Note [Double backward] in src/autograd/node.cpp).
Tensor composed_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, double eps, const Shape& dims,
                           int64_t count) {
  const int64_t rank = input.dim();
  const DType compute = statistics_dtype(input.dtype());
  const Tensor x = input.to(compute);
  const Tensor centered = sub(x, div(sum(x, dims, true), static_cast<double>(count)));
  const Tensor var = div(sum(mul(centered, centered), dims, true), static_cast<double>(count));
  Tensor y = mul(centered, rsqrt(add(var, eps)));
  if (weight.defined()) y = mul(y, per_channel(weight, rank, compute));
  if (bias.defined()) y = add(y, per_channel(bias, rank, compute));
  return y.to(input.dtype());
}

// One Affine pass of the fused kernel: x [N, C, ...] (dense in `format`, and so is the result)
// times scale[c] plus shift[c] (undefined: none), all in x's dtype.
Tensor affine_pass(const KernelTable& fused, const Tensor& x, const Tensor& scale, const Tensor& shift,
                   MemoryFormat format) {
  Tensor y = empty_on(x.shape(), x.dtype(), x.device(), format);
  FusedPass pass(BatchNormArgs::Pass::Affine, x, format);
  pass.args.a = dense_operand(scale);
  if (shift.defined()) pass.args.c = dense_operand(shift);
  pass.args.out = dense_result(y, format);
  wait_for_host(scale);
  fused.batch_norm(pass.args);
  return y;
}

}  // namespace

Tensor channel_affine(const Tensor& input, const Tensor& scale, const Tensor& shift) {
  const StructuredCall call(OpId::BatchNorm, {{input, "input"}, {scale, "weight"}, {shift, "bias"}});
  const DType dtype = input.dtype();
  const KernelTable* fused =
      dtype == DType::Float32 || dtype == DType::Float64 ? call.fused(&KernelTable::batch_norm, dtype) : nullptr;
  const int64_t rank = input.dim();
  if (!fused || input.numel() == 0) return addcmul(per_channel(shift, rank, dtype), input, per_channel(scale, rank, dtype));
  const MemoryFormat format = fused_format(*fused, input);
  const Tensor x = input.contiguous(format), a = scale.to(dtype).contiguous(), c = shift.to(dtype).contiguous();
  Tensor y;
  {
    NoGradGuard no_grad;
    y = affine_pass(*fused, x, a, c, format);
  }
  if (!call.needs_grad()) return y;
  // d/dx = a per channel (x is not read: an infinite x must not turn its gradient into NaN);
  // d/da = sum(g x) and d/dc = sum(g), both from one BackwardReduce pass.
  const DType scale_dtype = scale.dtype(), shift_dtype = shift.dtype();
  autograd::FunctionNode& node = autograd::record(y, "NativeBatchNormBackward0", [=](const Tensor& grad) -> std::vector<Tensor> {
    NoGradGuard no_grad;
    const Tensor g = grad.to(dtype).contiguous(format);
    FusedPass sums(BatchNormArgs::Pass::BackwardReduce, x, format);
    sums.args.grad = dense_operand(g, format);
    wait_for_host(g);
    fused->batch_norm(sums.args);
    return {affine_pass(*fused, g, a, Tensor(), format), sums.second.to(scale_dtype), sums.first.to(shift_dtype)};
  }, {&input, &scale, &shift}, {{x, input}});
  node.recompute_with({input, scale, shift}, [rank, dtype](const std::vector<Tensor>& in) {
    return addcmul(per_channel(in[2], rank, dtype), in[0], per_channel(in[1], rank, dtype));
  });
  return y;
}

Tensor batch_norm_training(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                           const Tensor& running_var, double momentum, double eps, const Shape& dims, int64_t count) {
  const StructuredCall call(OpId::BatchNorm, {{input, "input"}, {weight, "weight"}, {bias, "bias"}});
  const int64_t rank = input.dim();
  const DType compute = statistics_dtype(input.dtype());
  const KernelTable* fused = call.fused(&KernelTable::batch_norm, compute);
  Tensor x, mean, invstd, scale, y;
  const MemoryFormat format = fused ? fused_format(*fused, input) : MemoryFormat::Contiguous;
  {
    NoGradGuard no_grad;
    x = input.to(compute);
    Tensor var;
    if (fused) {
      x = x.contiguous(format);
      FusedPass stats(BatchNormArgs::Pass::Statistics, x, format);
      fused->batch_norm(stats.args);
      mean = per_channel(stats.first, rank, compute);
      var = per_channel(stats.second, rank, compute);
    } else {
      // Two passes (mean, then the mean square of x - mean): as exact as Welford's, and sum's
      // kernels are ~5x faster than var_mean's over these dims.
      mean = div(sum(x, dims, true), static_cast<double>(count));
      const Tensor centered = sub(x, mean);
      var = div(sum(mul(centered, centered), dims, true), static_cast<double>(count));
    }
    invstd = rsqrt(add(var, eps));
    scale = weight.defined() ? mul(invstd, per_channel(weight, rank, compute)) : invstd;
    const Tensor shift = bias.defined() ? sub(per_channel(bias, rank, compute), mul(mean, scale)) : neg(mul(mean, scale));
    y = channel_affine(x, scale.flatten(), shift.flatten()).to(input.dtype());
    if (running_mean.defined()) update_running(running_mean, mean.flatten(), momentum);
    if (running_var.defined())
      update_running(running_var, mul(var.flatten(), static_cast<double>(count) / static_cast<double>(count - 1)), momentum);
  }
  if (!call.needs_grad()) return y;
  const double m_count = static_cast<double>(count);
  const DType input_dtype = input.dtype();
  const bool has_weight = weight.defined(), has_bias = bias.defined();
  const DType weight_dtype = has_weight ? weight.dtype() : compute, bias_dtype = has_bias ? bias.dtype() : compute;
  const std::vector<Tensor> inputs = has_weight && has_bias ? std::vector<Tensor>{input, weight, bias}
                                     : has_weight           ? std::vector<Tensor>{input, weight}
                                     : has_bias             ? std::vector<Tensor>{input, bias}
                                                            : std::vector<Tensor>{input};
  autograd::FunctionNode& node = autograd::record(y, "NativeBatchNormBackward0", [=](const Tensor& grad) -> std::vector<Tensor> {
    Tensor g = grad.to(compute), sum_g, sum_gx;
    if (fused) {
      g = g.contiguous(format);
      FusedPass sums(BatchNormArgs::Pass::BackwardReduce, x, format);
      sums.args.grad = dense_operand(g, format);
      wait_for_host(g);
      fused->batch_norm(sums.args);
      sum_g = per_channel(sums.first, rank, compute), sum_gx = per_channel(sums.second, rank, compute);
    } else {
      sum_g = sum(g, dims, true), sum_gx = sum(mul(g, x), dims, true);
    }
    const Tensor sum_gxhat = mul(invstd, sub(sum_gx, mul(mean, sum_g)));
    const Tensor a = scale;  // weight invstd
    const Tensor b = div(neg(mul(mul(a, invstd), sum_gxhat)), m_count);
    const Tensor c = sub(div(neg(mul(a, sum_g)), m_count), mul(mean, b));
    Tensor gx;
    if (fused) {
      gx = empty_on(x.shape(), compute, x.device(), format);
      const Tensor ka = a.flatten().contiguous(), kb = b.flatten().contiguous(), kc = c.flatten().contiguous();
      FusedPass apply(BatchNormArgs::Pass::BackwardInput, x, format);
      apply.args.grad = dense_operand(g, format);
      apply.args.out = dense_result(gx, format);
      apply.args.a = dense_operand(ka);
      apply.args.b = dense_operand(kb);
      apply.args.c = dense_operand(kc);
      fused->batch_norm(apply.args);
      gx = gx.to(input_dtype);
    } else {
      gx = addcmul(addcmul(c, g, a), x, b).to(input_dtype);
    }
    std::vector<Tensor> grads{gx};
    if (has_weight) grads.push_back(sum_gxhat.flatten().to(weight_dtype));
    if (has_bias) grads.push_back(sum_g.flatten().to(bias_dtype));
    return grads;
  }, inputs, {{x, input}});
  node.recompute_with(inputs, [=](const std::vector<Tensor>& in) {
    const Tensor w = has_weight ? in[1] : Tensor(), b = has_bias ? in[has_weight ? 2 : 1] : Tensor();
    return composed_batch_norm(in[0], w, b, eps, dims, count);
  });
  return y;
}

}  // namespace locus::ops
