// The front end of the 2-d convolution (src/ops/conv.h): the fused kernel's three passes with
// their own backward node, or the general path, whose gradients come from its ops.

#include "src/ops/conv.h"

#include <vector>

#include "locus/autograd.h"
#include "locus/ops.h"
#include "locus/products.h"
#include "src/autograd/node.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/structured_call.h"

namespace locus::ops {
namespace {

// im2col and one product per group (Note [General convolution path]).
Tensor general_conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const WindowGeometry& g, int64_t groups) {
  const int64_t n = x.size(0), out_channels = weight.size(0);
  const Tensor columns = im2col(x, g);  // [N, C kk, L]
  const int64_t k = columns.size(1) / groups, windows = columns.size(2);
  Tensor out;
  if (groups == 1) out = matmul(weight.reshape({out_channels, k}), columns);
  else out = matmul(weight.reshape({groups, out_channels / groups, k}), columns.view({n, groups, k, windows}));
  out = out.reshape({n, out_channels, g.out_h, g.out_w});
  if (bias.defined()) out = add(out, bias.view({1, out_channels, 1, 1}));
  return out;
}

// The layout a convolution's output (and its input's gradient) takes, PyTorch's rule: channels-
// last when the input or the weight is stored that way, else contiguous.
MemoryFormat activation_format(const Tensor& input, const Tensor& weight) {
  const bool last = input.suggest_memory_format() == MemoryFormat::ChannelsLast ||
                    weight.suggest_memory_format() == MemoryFormat::ChannelsLast;
  return last ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous;
}

ConvArgs args_of(const Tensor& x, const Tensor& w, const WindowGeometry& g, int64_t groups, int device,
                 MemoryFormat format) {
  ConvArgs a;
  a.device = device;
  a.channels_last = format == MemoryFormat::ChannelsLast;
  a.dtype = x.dtype();
  a.n = x.size(0), a.c_in = x.size(1), a.h = x.size(2), a.w = x.size(3);
  a.c_out = w.size(0), a.kh = w.size(2), a.kw = w.size(3), a.out_h = g.out_h, a.out_w = g.out_w, a.groups = groups;
  a.pad_h = g.pad_h, a.pad_w = g.pad_w, a.stride_h = g.stride_h, a.stride_w = g.stride_w;
  a.dilation_h = g.dilation_h, a.dilation_w = g.dilation_w;
  return a;
}

// The general path's weight gradient, for a pass the fused kernel declines in the backward (the
// input's is conv_transpose2d).
Tensor general_grad_weight(const Tensor& go, const Tensor& x, const Tensor& w, const WindowGeometry& g, int64_t groups) {
  const int64_t n = go.size(0), out_channels = w.size(0), k = w.numel() / out_channels, windows = g.out_h * g.out_w;
  const Tensor columns = im2col(x, g).view({n, groups, k, windows});
  const Tensor per_sample = matmul(go.reshape({n, groups, out_channels / groups, windows}), columns.transpose(-1, -2));
  return sum(per_sample, Shape{0}).reshape(w.shape());
}

// The fused node. It saves the contiguous tensors the forward's kernel ran on (`x`, `w`) and binds
// its passes' operands from them (Note [Kernel operands]): the forward's ConvArgs pointed into
// temporaries that may be gone by the backward.
void record_fused(const KernelTable* k, const Tensor& input, const Tensor& weight, const Tensor& bias,
                  const Tensor& ran_x, const Tensor& ran_w, const Tensor& out, const WindowGeometry& g, int64_t groups,
                  int device, MemoryFormat format) {
  const Tensor x = ran_x.detach(), w = ran_w.detach();
  const bool need_x = input.requires_grad(), need_w = weight.requires_grad();
  const bool need_b = bias.defined() && bias.requires_grad();
  std::vector<Tensor> inputs{input, weight};
  if (bias.defined()) inputs.push_back(bias);
  autograd::FunctionNode& node = autograd::record(out, "ConvolutionBackward0", [=](const Tensor& grad) -> std::vector<Tensor> {
    const Tensor go = grad.contiguous(format);
    wait_for_host(go);
    Tensor gx, gw, gb;
    ConvArgs a = args_of(x, w, g, groups, device, format);
    a.input = ops::dense_operand(x, format, "input");
    a.weight = ops::dense_operand(w, "weight");
    a.grad_output = ops::dense_operand(go, format);
    if (need_x) {
      gx = empty_on(x.shape(), x.dtype(), x.device(), format);
      a.pass = ConvArgs::Pass::BackwardData;
      a.grad_input = ops::dense_result(gx, format);
      a.weights_next = need_w || need_b;
      if (!k->convolution(a)) gx = conv_transpose2d(go, w, g, groups, x.size(2), x.size(3));
    }
    if (need_w || need_b) {
      gw = empty_on(w.shape(), w.dtype(), w.device());
      gb = need_b ? empty_on({w.size(0)}, w.dtype(), w.device()) : Tensor();
      a.pass = ConvArgs::Pass::BackwardWeights;
      a.weights_next = false;
      a.grad_weight = ops::dense_result(gw);
      a.grad_bias = need_b ? ops::dense_result(gb) : nullptr;
      if (!k->convolution(a)) {
        gw = general_grad_weight(go, x, w, g, groups);
        if (need_b) gb = sum(go, Shape{0, 2, 3});
      }
    }
    std::vector<Tensor> grads{need_x ? gx : Tensor(), need_w ? gw : Tensor()};
    if (inputs.size() == 3) grads.push_back(gb);
    return grads;
  }, inputs, {{x, input}, {w, weight}});
  // Double backward: the composite convolution (im2col and a product) is differentiable.
  node.recompute_with(inputs, [g, groups](const std::vector<Tensor>& in) {
    return general_conv2d(in[0], in[1], in.size() > 2 ? in[2] : Tensor(), g, groups);
  });
}

}  // namespace

Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const WindowGeometry& g, int64_t groups, int64_t out_h,
                        int64_t out_w) {
  const int64_t n = x.size(0), channels = x.size(1), per_group = weight.numel() / channels;  // C_out / groups kH kW
  const int64_t windows = g.out_h * g.out_w;
  // columns[N, g, C_out/g kk, HW] = weight[g, C/g, C_out/g kk]^T @ x[N, g, C/g, HW]
  const Tensor filters = weight.reshape({groups, channels / groups, per_group}).transpose(1, 2);
  const Tensor columns = matmul(filters, x.reshape({n, groups, channels / groups, windows}));
  return col2im(columns.reshape({n, groups * per_group, windows}), out_h, out_w, g);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const WindowGeometry& g, int64_t groups) {
  const StructuredCall call(OpId::Convolution, {{input, "input"}, {weight, "weight"}, {bias, "bias"}});
  const KernelTable* k = call.fused(&KernelTable::convolution, input.dtype());
  // A backend without NHWC convolutions (cuDNN's graphs here: never run on a GPU in that layout)
  // gets contiguous activations, as before, and gives a contiguous result.
  const MemoryFormat format =
      k && k->convolution_channels_last ? activation_format(input, weight) : MemoryFormat::Contiguous;
  if (k && input.numel() > 0) {
    const Tensor x = input.contiguous(format), w = weight.contiguous();
    const Tensor b = bias.defined() ? bias.contiguous() : Tensor();
    Tensor out = empty_on({x.size(0), w.size(0), g.out_h, g.out_w}, x.dtype(), call.device(), format);
    ConvArgs a = args_of(x, w, g, groups, call.device_index(), format);
    a.input = ops::dense_operand(x, format);
    a.weight = ops::dense_operand(w);
    a.bias = ops::dense_operand(b);
    a.output = ops::dense_result(out, format);
    call.wait_for_inputs();
    wait_for_host(x), wait_for_host(w);
    if (b.defined()) wait_for_host(b);
    if (k->convolution(a)) {
      if (call.needs_grad()) record_fused(k, input, weight, bias, x, w, out, g, groups, a.device, format);
      return out;
    }
  }
  const Tensor out = general_conv2d(input, weight, bias, g, groups);
  return format == MemoryFormat::Contiguous ? out : out.contiguous(format);
}

}  // namespace locus::ops
