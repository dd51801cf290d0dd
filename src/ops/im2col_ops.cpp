// The front ends of im2col and col2im: one StructuredCall each (Note [Structured op path]).
// The callers (F::unfold, F::fold, the convolutions, pooling) check the user's arguments and
// compute the geometry; these only check what their own kernels rely on.

#include "src/ops/im2col.h"

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/ops.h"
#include "src/autograd/derivatives.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/structured_call.h"

namespace locus::ops {
namespace {

Im2colArgs args_for(OpId op, int device, DType dtype, const WindowGeometry& g) {
  Im2colArgs a;
  a.op = op;
  a.device = device;
  a.dtype = dtype;
  a.kernel_h = g.kernel_h, a.kernel_w = g.kernel_w, a.pad_h = g.pad_h, a.pad_w = g.pad_w;
  a.stride_h = g.stride_h, a.stride_w = g.stride_w, a.dilation_h = g.dilation_h, a.dilation_w = g.dilation_w;
  a.out_h = g.out_h, a.out_w = g.out_w;
  return a;
}

// The layout max pooling runs in: channels-last when `image` is stored so and the backend has
// those passes (Note [Channels-last max pooling]), else planes of contiguous images.
MemoryFormat pool_format(const KernelTable& k, const Tensor& image) {
  if (!k.max_pool_channels_last || image.dim() != 4) return MemoryFormat::Contiguous;
  return image.suggest_memory_format() == MemoryFormat::ChannelsLast ? MemoryFormat::ChannelsLast
                                                                     : MemoryFormat::Contiguous;
}

void check_floating(OpId op, const Tensor& t) {
  if (!is_floating_point(t.dtype()))
    throw DTypeError(op_prefix(op) + "expected a floating point input, got " + std::string(dtype_name(t.dtype())));
}

}  // namespace

Tensor im2col(const Tensor& image, const WindowGeometry& g, double fill) {
  const StructuredCall call(OpId::Im2col, {{image, "input"}});
  check_floating(OpId::Im2col, image);
  const KernelTable* k = call.kernels(image.dtype());
  if (!k) return call.fall_back([&](const Tensor& host) { return im2col(host, g, fill); }, image);
  const Tensor in = image.contiguous();
  const int64_t n = in.size(0), c = in.size(1);
  Tensor out = call.output({n, c * g.kernel_h * g.kernel_w, g.out_h * g.out_w}, in.dtype());
  Im2colArgs a = args_for(OpId::Im2col, call.device_index(), in.dtype(), g);
  a.in = ops::dense_operand(in);
  a.out = ops::dense_result(out);
  a.planes = n * c, a.height = in.size(2), a.width = in.size(3);
  a.fill = fill;
  call.wait_for_inputs();
  wait_for_host(in);
  if (out.numel()) k->im2col(a);
  if (call.needs_grad()) {
    const int64_t h = in.size(2), w = in.size(3);
    autograd::record_view("Im2ColBackward0", image, out, [h, w, g](const Tensor& grad) { return col2im(grad, h, w, g); });
  }
  return out;
}

Tensor col2im(const Tensor& columns, int64_t height, int64_t width, const WindowGeometry& g) {
  const StructuredCall call(OpId::Col2im, {{columns, "input"}});
  check_floating(OpId::Col2im, columns);
  const KernelTable* k = call.kernels(columns.dtype());
  if (!k) return call.fall_back([&](const Tensor& host) { return col2im(host, height, width, g); }, columns);
  const Tensor in = columns.contiguous();
  const int64_t n = in.size(0), c = in.size(1) / (g.kernel_h * g.kernel_w);
  Tensor out = call.output({n, c, height, width}, in.dtype());
  Im2colArgs a = args_for(OpId::Col2im, call.device_index(), in.dtype(), g);
  a.in = ops::dense_operand(in);
  a.out = ops::dense_result(out);
  a.planes = n * c, a.height = height, a.width = width;
  call.wait_for_inputs();
  wait_for_host(in);
  if (out.numel()) k->im2col(a);
  if (call.needs_grad())
    autograd::record_view("Col2ImBackward0", columns, out, [g](const Tensor& grad) { return im2col(grad, g); });
  return out;
}

namespace {

// The image gradient of max pooling from the windows' gradient and maxima's positions.
Tensor max_pool2d_backward(const Tensor& grad, const Tensor& indices, int64_t height, int64_t width, const WindowGeometry& g) {
  const StructuredCall call(OpId::MaxPool2dBackward, {{grad, "grad_output"}, {indices, "indices"}});
  const KernelTable* k = call.kernels(grad.dtype());
  if (!k)
    return call.fall_back([&](const Tensor& gh, const Tensor& ih) { return max_pool2d_backward(gh, ih, height, width, g); },
                          grad, indices);
  const MemoryFormat format = pool_format(*k, indices);
  const Tensor in = grad.contiguous(format), idx = indices.contiguous(format);
  Tensor out = empty_on({in.size(0), in.size(1), height, width}, in.dtype(), call.device(), format);
  Im2colArgs a = args_for(OpId::MaxPool2dBackward, call.device_index(), in.dtype(), g);
  a.in = ops::dense_operand(in, format);
  a.out = ops::dense_result(out, format);
  a.indices = const_cast<int64_t*>(ops::dense_operand<int64_t>(idx, format));
  a.planes = in.size(0) * in.size(1), a.height = height, a.width = width;
  if (format == MemoryFormat::ChannelsLast) a.channels_last = in.size(1);
  call.wait_for_inputs();
  wait_for_host(in), wait_for_host(idx);
  if (out.numel()) k->im2col(a);
  return out;
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d(const Tensor& image, const WindowGeometry& g, bool return_indices) {
  const StructuredCall call(OpId::MaxPool2d, {{image, "input"}});
  check_floating(OpId::MaxPool2d, image);
  const KernelTable* k = call.kernels(image.dtype());
  if (!k) {
    ValuesIndices r = run_on_cpu(call.device(), [&](const Tensor& host) {
      auto [values, indices] = max_pool2d(host, g, return_indices);
      return ValuesIndices{values, indices};
    }, image);
    return {r.values, r.indices};
  }
  const MemoryFormat format = pool_format(*k, image);
  const Tensor in = image.contiguous(format);
  const int64_t n = in.size(0), c = in.size(1), h = in.size(2), w = in.size(3);
  Tensor values = empty_on({n, c, g.out_h, g.out_w}, in.dtype(), call.device(), format);
  const bool with_indices = return_indices || call.needs_grad();
  Tensor indices = with_indices ? empty_on({n, c, g.out_h, g.out_w}, DType::Int64, call.device(), format) : Tensor();
  Im2colArgs a = args_for(OpId::MaxPool2d, call.device_index(), in.dtype(), g);
  a.in = ops::dense_operand(in, format);
  a.out = ops::dense_result(values, format);
  if (with_indices) a.indices = ops::dense_result<int64_t>(indices, format);
  a.planes = n * c, a.height = h, a.width = w;
  if (format == MemoryFormat::ChannelsLast) a.channels_last = c;
  call.wait_for_inputs();
  wait_for_host(in);
  if (values.numel()) k->im2col(a);
  if (call.needs_grad()) {
    const Tensor idx = indices;
    autograd::record_view("MaxPool2DWithIndicesBackward0", image, values,
                          [idx, h, w, g](const Tensor& grad) { return max_pool2d_backward(grad, idx, h, w, g); });
  }
  return {values, indices};
}

}  // namespace locus::ops
