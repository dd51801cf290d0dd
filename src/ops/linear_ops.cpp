// Linear as one product with its bias and activation (Note [Fused kernels]).

#include "src/ops/linear.h"

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/ops.h"
#include "src/autograd/node.h"
#include "src/core/device_ordinal.h"
#include "src/core/public_op.h"
#include "src/ops/autocast.h"
#include "src/ops/dispatch.h"
#include "src/ops/fused.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/structured_call.h"

namespace locus::ops {
namespace {

Tensor activation(const Tensor& y, Epilogue epilogue) {
  switch (epilogue) {
    case Epilogue::Relu: return relu(y);
    case Epilogue::Gelu: return gelu(y);
    case Epilogue::None: break;
  }
  return y;
}

// The composed form: what the fused kernels must equal.
Tensor composed(const Tensor& input, const Tensor& weight, const Tensor& bias, Epilogue epilogue) {
  Tensor y = matmul(input, weight.t());
  if (bias.defined()) y = add(y, bias);
  return activation(y, epilogue);
}

// The masked output gradient (ReLU) and the bias gradient, from one pass where the device has
// the kernel.
std::pair<Tensor, Tensor> pre_activation_grad(const Tensor& g, const Tensor& relu_output, bool need_bias) {
  const Device device = g.device();
  const int64_t m = g.size(0), n = g.size(1);
  if (const KernelTable* k = fused_kernels(&KernelTable::linear_grad, device, g.dtype(), {OpId::Linear})) {
    const Tensor pre = relu_output.defined() ? empty_on(g.shape(), g.dtype(), device) : g;
    const Tensor bias_grad = need_bias ? empty_on(Shape{n}, g.dtype(), device) : Tensor();
    if (relu_output.defined() || need_bias) {
      LinearGradArgs a;
      a.device = detail::ordinal(device);
      a.dtype = g.dtype();
      a.m = m, a.n = n;
      wait_for_host(g);
      a.grad = ops::dense_operand(g);
      a.output = ops::dense_operand(relu_output);
      a.grad_pre = relu_output.defined() ? ops::dense_result(pre) : nullptr;
      a.bias_grad = need_bias ? ops::dense_result(bias_grad) : nullptr;
      k->linear_grad(a);
    }
    return {pre, bias_grad};
  }
  const Tensor pre = relu_output.defined() ? mul(g, gt(relu_output, 0).to(g.dtype())) : g;
  return {pre, need_bias ? pre.sum(Shape{0}) : Tensor()};
}

void record_linear(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& x2, bool relu,
                   const Tensor& out) {
  const Tensor X = x2.detach(), W = weight.detach(), Y = relu ? out.detach() : Tensor();
  const Shape input_shape = input.shape();
  const bool need_x = input.requires_grad(), need_w = weight.requires_grad(),
             need_b = bias.defined() && bias.requires_grad();
  autograd::FunctionNode& node = autograd::record(out, "AddmmBackward0", [=](const Tensor& grad) -> std::vector<Tensor> {
    const Tensor g = grad.reshape({X.size(0), W.size(0)}).contiguous();
    const Tensor y = Y.defined() ? Y.reshape({X.size(0), W.size(0)}) : Tensor();
    const auto [pre, bias_grad] = pre_activation_grad(g, y, need_b);
    Tensor gx, gw;
    if (need_x) gx = matmul(pre, W).reshape(input_shape);
    // (g^T X) is [N, K]: the weight's own layout, contiguous for the optimizer.
    if (need_w) gw = matmul(pre.t(), X);
    return {gx, gw, bias_grad};
  }, {&input, &weight, &bias}, {{X, input}, {W, weight}, {Y, out}});
  // Double backward: the composition (matmul, add, relu) is differentiable.
  node.recompute_with({input, weight, bias}, [relu](const std::vector<Tensor>& in) {
    return composed(in[0], in[1], in[2], relu ? Epilogue::Relu : Epilogue::None);
  });
}

}  // namespace

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias, Epilogue epilogue) {
  if (autocast_active())
    return autocast(
        OpId::Linear, [epilogue](const Tensor& x, const Tensor& w, const Tensor& b) { return linear(x, w, b, epilogue); },
        input, weight, bias);
  // After autocast, which gives mixed float32 and bfloat16 arguments one dtype.
  if (input.dtype() != weight.dtype() || (bias.defined() && bias.dtype() != input.dtype()))
    throw DTypeError(detail::error_prefix("linear") + "expects input, weight and bias of one dtype, got " +
                     std::string(dtype_name(input.dtype())) + ", " + std::string(dtype_name(weight.dtype())) +
                     (bias.defined() ? " and " + std::string(dtype_name(bias.dtype())) : " (no bias)") +
                     "; convert with .to(dtype)");
  const StructuredCall call(OpId::Linear, {{input, "input"}, {weight, "weight"}, {bias, "bias"}});
  const Device device = call.device();
  const DType dtype = weight.dtype();
  const bool grad = call.needs_grad();
  // Integer and bool products keep the composed path (and its errors).
  const KernelTable* k = is_floating_point(dtype) ? call.fused(&KernelTable::linear, dtype, {OpId::Matmul}) : nullptr;
  if (!k) return composed(input, weight, bias, epilogue);
  // GELU's backward needs its input: with autograd recording, the kernel stops at the bias.
  if (grad && epilogue == Epilogue::Gelu) return gelu(linear(input, weight, bias, Epilogue::None));
  const int64_t n = weight.size(0), kdim = weight.size(1);
  int64_t m = 1;  // the rows: every dim but the last (counted, since k may be 0)
  for (int64_t d = 0; d + 1 < input.dim(); ++d) m *= input.size(d);
  const Tensor x2 = input.detach().reshape({m, kdim});
  Shape out_shape;
  for (int64_t d = 0; d + 1 < input.dim(); ++d) out_shape.push_back(input.size(d));
  out_shape.push_back(n);
  Tensor out = empty_on(Shape{m, n}, dtype, device);
  if (out.numel() > 0) {
    const Tensor b = bias.defined() ? bias.detach().contiguous() : Tensor();
    MatmulArgs a;
    a.device = detail::ordinal(device);
    a.dtype = dtype;
    a.m = m, a.n = n, a.k = kdim;
    a.a = ops::strided_operand(x2), a.a_row = x2.stride(0), a.a_col = x2.stride(1);
    a.b = ops::strided_operand(weight), a.b_row = weight.stride(1), a.b_col = weight.stride(0);
    a.c = ops::dense_result(out), a.c_batch_stride = m * n;
    a.bias = ops::dense_operand(b);
    a.epilogue = epilogue;
    wait_for_host(x2);
    wait_for_host(weight);
    if (b.defined()) wait_for_host(b);
    k->linear(a);
  }
  out = out.view(out_shape);
  if (grad) record_linear(input, weight, bias, x2, epilogue == Epilogue::Relu, out);
  return out;
}

}  // namespace locus::ops
