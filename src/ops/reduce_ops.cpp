// Front ends of sum, mean, max, min, argmax, softmax and log_softmax.

#include <string>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/ops.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
#include "src/ops/autocast.h"
#include "src/ops/dispatch.h"

namespace locus {
namespace {

using ops::OpId;

std::vector<bool> reduced_dims(const Tensor& x, const Shape& dims, OpId op) {
  std::vector<bool> reduced(static_cast<size_t>(x.dim()), dims.empty());
  for (int64_t d : dims) {
    const int64_t w = ops::wrap_dim(d, x.dim(), op);
    if (x.dim() == 0) continue;
    if (reduced[static_cast<size_t>(w)] && !dims.empty() && std::count(dims.begin(), dims.end(), d) > 1)
      throw ValueError(ops::op_prefix(op) + "dim " + std::to_string(d) + " appears more than once");
    reduced[static_cast<size_t>(w)] = true;
  }
  return reduced;
}

Tensor sum_impl(OpId op, const Tensor& x, const Shape& dims, bool keepdim, std::optional<DType> dtype) {
  if (ops::autocast_active())
    return ops::autocast(op, [&](const Tensor& in) { return sum_impl(op, in, dims, keepdim, dtype); }, x);
  const Device device = x.device();
  DType out_dtype = dtype.value_or(is_floating_point(x.dtype()) ? x.dtype() : DType::Int64);
  if (op == OpId::Mean) {
    if (!is_floating_point(dtype.value_or(x.dtype())))
      throw DTypeError(ops::op_prefix(OpId::Mean) + "needs a floating dtype, got " + std::string(dtype_name(x.dtype())) +
                       "; convert with .to(kFloat32) first");
    out_dtype = dtype.value_or(x.dtype());
  }
  const std::vector<bool> reduced = reduced_dims(x, dims, op);
  Shape out_shape, kept_shape;
  int64_t reduce_numel = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (reduced[static_cast<size_t>(d)]) {
      reduce_numel *= x.size(d);
      if (keepdim) out_shape.push_back(1);
    } else {
      out_shape.push_back(x.size(d));
    }
  }
  // With a dtype, each element is converted before summing (PyTorch's sum(dtype=...)).
  const DType in_dtype = dtype.value_or(x.dtype());
  const ops::KernelTable* k = ops::kernels_for(op, device, in_dtype);
  if (!k)
    return ops::run_on_cpu(device, [&](const Tensor& host) { return sum_impl(op, host, dims, keepdim, dtype); }, x);
  Tensor in = x;
  if (in_dtype != x.dtype()) {
    NoGradGuard no_grad;  // the sum is the recorded op; its backward converts back to x's dtype
    in = x.to(in_dtype);
  }
  Tensor out = ops::empty_on(out_shape, out_dtype, device);
  ops::ReduceArgs a;
  a.op = op;
  a.device = device.is_cpu() ? 0 : device.index();
  a.in_dtype = in.dtype();
  a.out_dtype = out_dtype;
  a.in = static_cast<const char*>(in.data_ptr());
  a.out = static_cast<char*>(out.data_ptr());
  a.out_numel = out.numel();
  a.reduce_numel = reduce_numel;
  // Output element strides over the input's dims: 0 on reduced dims, row-major otherwise.
  int64_t stride = 1;
  Shape out_strides(static_cast<size_t>(in.dim()), 0);
  for (int64_t d = in.dim() - 1; d >= 0; --d)
    if (!reduced[static_cast<size_t>(d)]) {
      out_strides[static_cast<size_t>(d)] = stride;
      stride *= in.size(d);
    }
  const auto item = static_cast<int64_t>(in.itemsize());
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (in.size(d) == 1) continue;  // size-1 dims add nothing
    a.shape.push_back(in.size(d));
    a.in_strides.push_back(in.stride(d) * item);
    a.out_strides.push_back(out_strides[static_cast<size_t>(d)]);
  }
  if (a.shape.empty() && in.numel() == 1) {
    a.shape.push_back(1);
    a.in_strides.push_back(item);
    a.out_strides.push_back(0);
  }
  if (in.numel() == 0) a.shape = Shape{0}, a.in_strides = Shape{item}, a.out_strides = Shape{0};
  ops::wait_for_host(in);
  k->reduce(a);
  if (is_floating_point(out_dtype) && autograd::needs_grad({&x})) autograd::record_sum(x, reduced, keepdim, op == OpId::Mean, out);
  return out;
}

// Max/min/argmax over one dim (or all, dim = nullopt) of a contiguous copy laid out as
// [outer, dim, inner].
ValuesIndices extreme_impl(OpId op, const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  const Device device = x.device();
  const std::string name(ops::op_name(op));
  // As PyTorch: an empty tensor has no max without a dim; along a dim of size 0 neither; along
  // another dim the result is simply empty.
  if (x.numel() == 0 && !dim)
    throw IndexError(ops::op_prefix(op) + "expected a reduction dim for a tensor with 0 elements (there is no " + name +
                     " of nothing); pass one with the dim argument");
  if (x.numel() == 0 && x.dim() > 0 && x.size(*dim) == 0)
    throw IndexError(ops::op_prefix(op) + "expected reduction dim " + std::to_string(*dim) + " to have non-zero size");
  if ((op == OpId::Argmax || op == OpId::Argmin) && x.dtype() == DType::Bool)
    throw DTypeError(ops::op_prefix(op) + "is not supported for bool tensors (as in PyTorch); convert with .to(kUInt8) "
                     "first, or use max / min, which take bools");
  const ops::KernelTable* k = ops::kernels_for(op, device, x.dtype());
  if (!k)
    return ops::run_on_cpu(device, [&](const Tensor& host) { return extreme_impl(op, host, dim, keepdim); }, x);
  const Tensor in = x.contiguous();
  int64_t outer = 1, size = in.numel(), inner = 1;
  Shape out_shape;
  if (dim) {
    const int64_t d = ops::wrap_dim(*dim, in.dim(), op);
    if (in.dim() > 0) {
      size = in.size(d);
      for (int64_t i = 0; i < d; ++i) outer *= in.size(i);
      for (int64_t i = d + 1; i < in.dim(); ++i) inner *= in.size(i);
      for (int64_t i = 0; i < in.dim(); ++i)
        if (i != d) out_shape.push_back(in.size(i));
        else if (keepdim) out_shape.push_back(1);
    }
  }
  ValuesIndices r;
  const bool arg = op == OpId::Argmax || op == OpId::Argmin;
  const bool want_values = !arg;
  const bool want_indices = arg || dim.has_value();
  if (want_values) r.values = ops::empty_on(out_shape, in.dtype(), device);
  if (want_indices) r.indices = ops::empty_on(out_shape, DType::Int64, device);
  ops::ReduceArgs a;
  a.op = op;
  a.device = device.is_cpu() ? 0 : device.index();
  a.in_dtype = a.out_dtype = in.dtype();
  a.in = static_cast<const char*>(in.data_ptr());
  a.out = static_cast<char*>(want_values ? r.values.data_ptr() : r.indices.data_ptr());
  a.indices = want_values && want_indices ? static_cast<char*>(r.indices.data_ptr()) : nullptr;
  a.shape = Shape{outer, size, inner};
  ops::wait_for_host(in);
  k->reduce(a);
  if (want_values && is_floating_point(x.dtype()) && autograd::needs_grad({&x}))
    autograd::record_extreme(x, dim, keepdim, r.values, r.indices);
  return r;
}

}  // namespace

Tensor sum(const Tensor& x, std::optional<DType> dtype) { return sum_impl(OpId::Sum, x, {}, false, dtype); }
Tensor sum(const Tensor& x, const Shape& dims, bool keepdim, std::optional<DType> dtype) {
  return sum_impl(OpId::Sum, x, dims, keepdim, dtype);
}
Tensor sum(const Tensor& x, int64_t dim, bool keepdim, std::optional<DType> dtype) {
  return sum_impl(OpId::Sum, x, Shape{dim}, keepdim, dtype);
}
Tensor mean(const Tensor& x) { return sum_impl(OpId::Mean, x, {}, false, std::nullopt); }
Tensor mean(const Tensor& x, const Shape& dims, bool keepdim) { return sum_impl(OpId::Mean, x, dims, keepdim, std::nullopt); }
Tensor mean(const Tensor& x, int64_t dim, bool keepdim) { return sum_impl(OpId::Mean, x, Shape{dim}, keepdim, std::nullopt); }
Tensor max(const Tensor& x) { return extreme_impl(OpId::Max, x, std::nullopt, false).values; }
Tensor min(const Tensor& x) { return extreme_impl(OpId::Min, x, std::nullopt, false).values; }
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim) { return extreme_impl(OpId::Max, x, dim, keepdim); }
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim) { return extreme_impl(OpId::Min, x, dim, keepdim); }
Tensor argmax(const Tensor& x) { return extreme_impl(OpId::Argmax, x, std::nullopt, false).indices; }
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) { return extreme_impl(OpId::Argmax, x, dim, keepdim).indices; }
Tensor argmin(const Tensor& x) { return extreme_impl(OpId::Argmin, x, std::nullopt, false).indices; }
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) { return extreme_impl(OpId::Argmin, x, dim, keepdim).indices; }

namespace {
Tensor softmax_impl(OpId op, const Tensor& x, int64_t dim) {
  if (ops::autocast_active()) return ops::autocast(op, [&](const Tensor& in) { return softmax_impl(op, in, dim); }, x);
  const Device device = x.device();
  const DType dtype = is_floating_point(x.dtype()) ? x.dtype() : get_default_dtype();
  const int64_t d = ops::wrap_dim(dim, x.dim(), op);
  const ops::KernelTable* k = ops::kernels_for(op, device, dtype);
  if (!k) return ops::run_on_cpu(device, [&](const Tensor& host) { return softmax_impl(op, host, dim); }, x);
  const Tensor in = (x.dtype() == dtype ? x : x.to(dtype)).contiguous();
  Tensor out = ops::empty_on(in.shape(), dtype, device);
  ops::SoftmaxArgs a;
  a.device = device.is_cpu() ? 0 : device.index();
  a.log = op == OpId::LogSoftmax;
  a.dtype = dtype;
  a.in = static_cast<const char*>(in.data_ptr());
  a.out = static_cast<char*>(out.data_ptr());
  a.outer = 1, a.dim = in.dim() ? in.size(d) : 1, a.inner = 1;
  for (int64_t i = 0; i < d; ++i) a.outer *= in.size(i);
  for (int64_t i = d + 1; i < in.dim(); ++i) a.inner *= in.size(i);
  ops::wait_for_host(in);
  if (in.numel()) k->softmax(a);
  if (autograd::needs_grad({&x})) autograd::record_softmax(op == OpId::LogSoftmax, d, x, out);
  return out;
}
}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) { return softmax_impl(OpId::Softmax, x, dim); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_impl(OpId::LogSoftmax, x, dim); }

}  // namespace locus
