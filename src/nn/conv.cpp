// The convolutions (F::conv1d, F::conv2d, F::conv_transpose2d) and the im2col pair they are
// built on (F::unfold, F::fold), checked as PyTorch 1.13 checks them.
//
// Note [General convolution path]
// Where a backend has a fused convolution (KernelTable::convolution: oneDNN's primitives on the
// CPU, src/ops/conv_ops.cpp) and it takes the call, that runs. Otherwise a convolution is im2col (ops::im2col: every window as a column, [N, C_in kH kW, L]) and one
// matrix product per group with the filters as a [C_out / g, C_in / g kH kW] matrix; the
// transposed convolution is the product with the filters' transpose and col2im. Both run on
// every device that has the im2col kernels and a matmul, and their gradients come from those two
// ops (col2im is a gather, so no atomics and the same sums on every device). A 1-d convolution
// is the 2-d one over a height of 1.

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/conv.h"
#include "locus/nn/functional/conv.h"
#include "locus/nn/functional/padding.h"
#include "locus/ops.h"
#include "locus/products.h"
#include "locus/shape_ops.h"
#include "src/core/public_op.h"
#include "src/nn/conv_geometry.h"
#include "src/nn/python_repr.h"
#include "src/ops/autocast.h"
#include "src/ops/conv.h"
#include "src/ops/im2col.h"
#include "src/ops/public_op.h"

namespace locus::nn {
namespace functional {
namespace {

using locus::detail::error_prefix;

// The user's arguments of one convolution call, per spatial dim (1 or 2 of them).
struct ConvCall {
  const char* name;  // "conv2d"
  bool transposed = false;
  std::vector<int64_t> stride, padding, dilation, output_padding;
  int64_t groups = 1;
  bool same = false;
};

std::string shape_text(const Tensor& t) { return detail::shape_text(t.shape()); }

// PyTorch 1.13's checks of a convolution's arguments, in its order.
void check_conv(const ConvCall& c, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  const int64_t d = static_cast<int64_t>(c.stride.size());
  const std::string p = error_prefix(c.name);
  if (input.dim() != d + 1 && input.dim() != d + 2)
    throw ShapeError(p + "Expected " + std::to_string(d + 1) + "D (unbatched) or " + std::to_string(d + 2) +
                     "D (batched) input to " + c.name + ", but got input of size: " + shape_text(input));
  if (weight.dim() != d + 2)
    throw ShapeError(p + "expected a " + std::to_string(d + 2) + "-D weight [" +
                     (c.transposed ? "in_channels, out_channels / groups" : "out_channels, in_channels / groups") +
                     ", kernel...], got weight of size " + shape_text(weight));
  if (input.dtype() != weight.dtype() || (bias.defined() && bias.dtype() != input.dtype()))
    throw DTypeError(p + "expects input, weight and bias of one dtype, got " + std::string(dtype_name(input.dtype())) +
                     ", " + std::string(dtype_name(weight.dtype())) +
                     (bias.defined() ? " and " + std::string(dtype_name(bias.dtype())) : " (no bias)") +
                     "; convert with .to(dtype)");
  if (!is_floating_point(input.dtype()))
    throw DTypeError(p + "expects floating point tensors, got " + std::string(dtype_name(input.dtype())));
  for (int64_t s : c.stride)
    if (s <= 0) throw ValueError(p + "non-positive stride is not supported");
  for (int64_t s : c.padding)
    if (s < 0) throw ValueError(p + "negative padding is not supported");
  for (int64_t s : c.dilation)
    if (s <= 0) throw ValueError(p + "non-positive dilation is not supported");
  if (c.groups <= 0) throw ValueError(p + "non-positive groups is not supported");
  const Tensor x = input.dim() == d + 1 ? input.unsqueeze(0) : input;
  const int64_t channels = x.size(1);
  if (!c.transposed) {
    if (weight.size(0) % c.groups != 0)
      throw ValueError(p + "Given groups=" + std::to_string(c.groups) + ", expected weight to be divisible by " +
                       std::to_string(c.groups) + " at dimension 0, but got weight of size " + shape_text(weight) +
                       " instead");
    if (channels != weight.size(1) * c.groups)
      throw ShapeError(p + "Given groups=" + std::to_string(c.groups) + ", weight of size " + shape_text(weight) +
                       ", expected input" + shape_text(x) + " to have " + std::to_string(weight.size(1) * c.groups) +
                       " channels, but got " + std::to_string(channels) + " channels instead");
  } else {
    if (channels != weight.size(0))
      throw ShapeError(p + "Given transposed=1, weight of size " + shape_text(weight) + ", expected input" +
                       shape_text(x) + " to have " + std::to_string(weight.size(0)) + " channels, but got " +
                       std::to_string(channels) + " channels instead");
    if (channels % c.groups != 0)
      throw ValueError(p + "Given groups=" + std::to_string(c.groups) + ", expected input channels " +
                       std::to_string(channels) + " to be divisible by the groups");
  }
  const int64_t out_channels = c.transposed ? weight.size(1) * c.groups : weight.size(0);
  if (bias.defined() && !(bias.dim() == 1 && bias.size(0) == out_channels))
    throw ShapeError(p + "Given weight of size " + shape_text(weight) + ", expected bias to be 1-dimensional with " +
                     std::to_string(out_channels) + " elements, but got bias of size " + shape_text(bias) + " instead");
  if (c.same && !c.transposed)
    for (int64_t s : c.stride)
      if (s != 1) throw ValueError(p + "padding='same' is not supported for strided convolutions");
  if (!c.transposed && !c.same) {
    bool too_small = false;
    std::ostringstream padded, kernel;
    for (int64_t i = 0; i < d; ++i) {
      const int64_t in = x.size(2 + i) + 2 * c.padding[static_cast<size_t>(i)];
      const int64_t k = c.dilation[static_cast<size_t>(i)] * (weight.size(2 + i) - 1) + 1;
      too_small |= in < k;
      padded << (i ? " x " : "") << in;
      kernel << (i ? " x " : "") << k;
    }
    if (too_small)
      throw ShapeError(p + "Calculated padded input size per channel: (" + padded.str() + "). Kernel size: (" +
                       kernel.str() + "). Kernel size can't be greater than actual input size");
  }
  if (c.transposed)
    for (int64_t i = 0; i < d; ++i) {
      const size_t k = static_cast<size_t>(i);
      if (c.output_padding[k] < 0) throw ValueError(p + "negative output_padding is not supported");
      if (c.output_padding[k] >= c.stride[k] && c.output_padding[k] >= c.dilation[k]) {
        std::ostringstream os;
        os << p << "output padding must be smaller than either stride or dilation, but got";
        const char* names[] = {"height", "width"};
        const size_t first = d == 2 ? 0 : 1;
        for (size_t j = 0; j < static_cast<size_t>(d); ++j) os << " output_padding_" << names[first + j] << ": " << c.output_padding[j];
        for (size_t j = 0; j < static_cast<size_t>(d); ++j) os << " stride_" << names[first + j] << ": " << c.stride[j];
        for (size_t j = 0; j < static_cast<size_t>(d); ++j) os << " dilation_" << names[first + j] << ": " << c.dilation[j];
        throw ValueError(os.str());
      }
    }
}

// A 1-d call's arguments as the 2-d ones over a height of 1.
std::vector<int64_t> with_unit_height(const std::vector<int64_t>& v, int64_t unit) { return {unit, v[0]}; }

// Conv over [N, C, H, W] (checked, padding explicit and symmetric).
Tensor conv2d_batched(const Tensor& x, const Tensor& weight, const Tensor& bias, const ConvCall& c) {
  const ops::WindowGeometry geo = window_geometry(x.size(2), x.size(3), weight.size(2), weight.size(3), c.padding,
                                                  c.stride, c.dilation);
  return ops::conv2d(x, weight, bias, geo, c.groups);
}

// Conv-transpose over [N, C_in, H, W] (checked).
Tensor conv_transpose2d_batched(const Tensor& x, const Tensor& weight, const Tensor& bias, const ConvCall& c) {
  const int64_t h = x.size(2), w = x.size(3);
  const int64_t out_channels = weight.size(1) * c.groups, kh = weight.size(2), kw = weight.size(3);
  const int64_t out_h = (h - 1) * c.stride[0] - 2 * c.padding[0] + c.dilation[0] * (kh - 1) + c.output_padding[0] + 1;
  const int64_t out_w = (w - 1) * c.stride[1] - 2 * c.padding[1] + c.dilation[1] * (kw - 1) + c.output_padding[1] + 1;
  if (out_h <= 0 || out_w <= 0)
    throw ShapeError(error_prefix(c.name) + "Given input size per channel: (" + std::to_string(h) + " x " +
                     std::to_string(w) + "), the calculated output size per channel (" + std::to_string(out_h) + " x " +
                     std::to_string(out_w) + ") is too small");
  ops::WindowGeometry geo{kh, kw, c.padding[0], c.padding[1], c.stride[0], c.stride[1], c.dilation[0], c.dilation[1], h, w};
  Tensor out = ops::conv_transpose2d(x, weight, geo, c.groups, out_h, out_w);
  if (bias.defined()) out = add(out, bias.view({1, out_channels, 1, 1}));
  return out;
}

// Runs `batched` over a 4-d input, adding and removing the batch dim of an unbatched one.
template <class F>
Tensor with_batch(const Tensor& input, int64_t batched_dims, F&& batched) {
  if (input.dim() == batched_dims) return batched(input);
  return batched(input.unsqueeze(0)).squeeze(0);
}

// padding='same': dilation (k - 1) in total per dim, the odd one on the right (as PyTorch).
// Returns the input with the extra right padding, and sets the symmetric part.
Tensor same_padding(const Tensor& x, const Tensor& weight, int64_t d, std::vector<int64_t>& padding,
                    const std::vector<int64_t>& dilation) {
  std::vector<int64_t> extra;  // F::pad's list: last dim first
  bool any = false;
  padding.assign(static_cast<size_t>(d), 0);
  for (int64_t i = d - 1; i >= 0; --i) {
    const int64_t total = dilation[static_cast<size_t>(i)] * (weight.size(2 + i) - 1);
    padding[static_cast<size_t>(i)] = total / 2;
    extra.push_back(0);
    extra.push_back(total % 2);
    any |= total % 2 != 0;
  }
  return any ? pad(x, PadFuncOptions(extra)) : x;
}

Tensor conv_nd(ConvCall c, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  const ops::PublicOp op(c.name, {{input, "input"}, {weight, "weight"}, {bias, "bias"}});
  if (ops::autocast_active())
    return ops::autocast(
        ops::OpId::Convolution, [&c](const Tensor& x, const Tensor& w, const Tensor& b) { return conv_nd(c, x, w, b); },
        input, weight, bias);
  check_conv(c, input, weight, bias);
  const int64_t d = static_cast<int64_t>(c.stride.size());
  Tensor x = input;
  if (c.same) x = same_padding(x, weight, d, c.padding, c.dilation);
  if (d == 2)
    return with_batch(x, 4, [&](const Tensor& b) { return conv2d_batched(b, weight, bias, c); });
  // 1-d: the 2-d convolution over a height of 1.
  ConvCall c2 = c;
  c2.stride = with_unit_height(c.stride, 1), c2.padding = with_unit_height(c.padding, 0);
  c2.dilation = with_unit_height(c.dilation, 1);
  const Tensor w2 = weight.unsqueeze(2);
  return with_batch(x, 3, [&](const Tensor& b) { return conv2d_batched(b.unsqueeze(2), w2, bias, c2).squeeze(2); });
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& o) {
  const bool same = o.padding().is_same();
  return conv_nd({"conv1d", false, o.stride().vec(), o.padding().sizes().vec(), o.dilation().vec(), {}, o.groups(), same},
                 input, weight, o.bias());
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& o) {
  const bool same = o.padding().is_same();
  return conv_nd({"conv2d", false, o.stride().vec(), o.padding().sizes().vec(), o.dilation().vec(), {}, o.groups(), same},
                 input, weight, o.bias());
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const ConvTranspose2dFuncOptions& o) {
  const ConvCall c{"conv_transpose2d", true, o.stride().vec(), o.padding().vec(), o.dilation().vec(),
                   o.output_padding().vec(), o.groups(), false};
  const ops::PublicOp op(c.name, {{input, "input"}, {weight, "weight"}, {o.bias(), "bias"}});
  if (ops::autocast_active())
    return ops::autocast(
        ops::OpId::Convolution,
        [&](const Tensor& x, const Tensor& w, const Tensor& b) { return conv_transpose2d(x, w, ConvTranspose2dFuncOptions(o).bias(b)); },
        input, weight, o.bias());
  check_conv(c, input, weight, o.bias());
  return with_batch(input, 4, [&](const Tensor& b) { return conv_transpose2d_batched(b, weight, o.bias(), c); });
}

Tensor unfold(const Tensor& input, const UnfoldFuncOptions& o) {
  const ops::PublicOp op("unfold", {{input, "input"}});
  const std::string p = error_prefix("unfold");
  if (input.dim() != 3 && input.dim() != 4)
    throw ShapeError(p + "Input Error: Only 3D or 4D input Tensors are supported (got " + std::to_string(input.dim()) + "D)");
  check_window_args(p, o.kernel_size().vec(), o.stride().vec(), o.padding().vec(), o.dilation().vec());
  const Tensor x = input.dim() == 3 ? input.unsqueeze(0) : input;
  const ops::WindowGeometry geo = window_geometry(x.size(2), x.size(3), o.kernel_size()[0], o.kernel_size()[1],
                                                  o.padding().vec(), o.stride().vec(), o.dilation().vec());
  if (geo.out_h < 1 || geo.out_w < 1) {
    std::ostringstream os;
    os << p << "Given input with spatial size (" << x.size(2) << ", " << x.size(3) << "), kernel_size="
       << tuple_repr(o.kernel_size().vec()) << ", dilation=" << tuple_repr(o.dilation().vec())
       << ", padding=" << tuple_repr(o.padding().vec()) << ", calculated shape of the array of sliding blocks as ("
       << geo.out_h << ", " << geo.out_w << "), but its components must be at least one.";
    throw ShapeError(os.str());
  }
  const Tensor out = ops::im2col(x, geo);
  return input.dim() == 3 ? out.squeeze(0) : out;
}

Tensor fold(const Tensor& input, const FoldFuncOptions& o) {
  const ops::PublicOp op("fold", {{input, "input"}});
  const std::string p = error_prefix("fold");
  if (input.dim() != 2 && input.dim() != 3)
    throw ShapeError(p + "Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got " +
                     std::to_string(input.dim()) + "D)");
  check_window_args(p, o.kernel_size().vec(), o.stride().vec(), o.padding().vec(), o.dilation().vec());
  for (size_t i = 0; i < 2; ++i)
    if (o.output_size()[i] <= 0) throw ValueError(p + "output_size must be positive, got " + tuple_repr(o.output_size().vec()));
  const Tensor x = input.dim() == 2 ? input.unsqueeze(0) : input;
  const int64_t kk = o.kernel_size()[0] * o.kernel_size()[1];
  if (x.size(1) % kk != 0)
    throw ShapeError(p + "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
                         "input.size(1)=" + std::to_string(x.size(1)) + " and kernel_size=" + tuple_repr(o.kernel_size().vec()) + ".");
  const ops::WindowGeometry geo = window_geometry(o.output_size()[0], o.output_size()[1], o.kernel_size()[0],
                                                  o.kernel_size()[1], o.padding().vec(), o.stride().vec(), o.dilation().vec());
  if (geo.out_h < 1 || geo.out_w < 1 || x.size(2) != geo.out_h * geo.out_w) {
    std::ostringstream os;
    os << p << "Given output_size=" << tuple_repr(o.output_size().vec()) << ", kernel_size=" << tuple_repr(o.kernel_size().vec())
       << ", dilation=" << tuple_repr(o.dilation().vec()) << ", padding=" << tuple_repr(o.padding().vec())
       << ", stride=" << tuple_repr(o.stride().vec()) << ", expected size of input's dimension 2 to match the calculated number of sliding blocks "
       << geo.out_h << " * " << geo.out_w << " = " << geo.out_h * geo.out_w << ", but got input.size(2)=" << x.size(2) << ".";
    throw ShapeError(os.str());
  }
  const Tensor out = ops::col2im(x, o.output_size()[0], o.output_size()[1], geo);
  return input.dim() == 2 ? out.squeeze(0) : out;
}

}  // namespace functional
}  // namespace locus::nn
