// Masks and scatters: masked_fill, masked_select, masked_scatter, scatter, scatter_add,
// index_add, take_along_dim, and the Index family's scatter front end they share.

#include <sstream>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
#include "src/core/device_ordinal.h"
#include "src/core/public_op.h"
#include "src/ops/deferred_check.h"
#include "src/ops/dispatch.h"
#include "src/ops/index_helpers.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/strided_iter.h"
#include "src/ops/structured_call.h"

namespace locus {

using ops::OpId;

namespace ops {

// Note [Scatter front end]: every scatter of this file (and index_put_, masked_scatter) comes
// here, to walk Note [Structured op path] once for all of them: the device rule, the kernels or
// the CPU fallback, the result, the wait. The callers record the gradient, each its own. The
// kernel updates a contiguous [outer, out_dim, inner] destination in place from a contiguous
// [outer, in_dim, inner] source (kernel_table.h, IndexArgs). An index smaller than the
// destination off `dim` (scatter allows it) updates the leading block there: that block is
// scattered as a contiguous copy and written back.
Tensor run_scatter(OpId op, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  const ops::StructuredCall call(op, {{self, "self"}, {index, "index"}, {src, "src"}});
  const Device device = call.device();
  const ops::KernelTable* k = call.kernels(self.dtype());
  if (!k)
    return call.fall_back([&](const Tensor& hs, const Tensor& hi, const Tensor& hsrc) { return run_scatter(op, hs, dim, hi, hsrc); },
                          self, index, src);
  NoGradGuard no_grad;  // the callers record the op itself
  // A 0-dim operand is a 1-element line (PyTorch's scatter takes dim 0 or -1 for it).
  const Tensor s = self.dim() ? self : self.reshape({1});
  // A 0-dim CPU index or source passes the device check (as a CPU scalar does): move it.
  const Tensor idx = (index.dim() ? index : index.reshape({1})).to(device).contiguous();
  Tensor in = (src.dim() ? src : src.reshape({1})).to(device);
  const int64_t d = dim < 0 ? dim + s.dim() : dim;
  Tensor out = call.output(s.shape(), s.dtype());
  out.copy_(s);
  Tensor region = out;
  if (op != OpId::IndexAdd) {
    for (int64_t i = 0; i < s.dim(); ++i) {
      if (i != d && idx.size(i) < s.size(i)) region = region.narrow(i, 0, idx.size(i));
      if (idx.size(i) < in.size(i)) in = in.narrow(i, 0, idx.size(i));
    }
  }
  in = in.contiguous();
  Tensor work = region.is_contiguous() ? region : region.contiguous();
  ops::IndexArgs a;
  a.op = op;
  a.device = detail::ordinal(device);
  a.dtype = s.dtype();
  a.dim = d;
  a.outer = 1, a.inner = 1;
  for (int64_t i = 0; i < d; ++i) a.outer *= work.size(i);
  for (int64_t i = d + 1; i < work.dim(); ++i) a.inner *= work.size(i);
  a.out_dim = work.size(d);
  a.in_dim = in.size(d);
  if (a.outer * a.in_dim * a.inner == 0) return self.dim() ? out : out.reshape({});
  if (k->defer_check) ops::check_range(op, ops::CheckKind::IndexOutOfBounds, idx, a.out_dim);
  a.in = ops::dense_operand(in);
  a.out = ops::dense_result(work);
  a.index = ops::dense_operand<int64_t>(idx);
  ops::wait_for_host(in);
  ops::wait_for_host(idx);
  ops::wait_for_host(work);
  k->index(a);
  if (!work.is_same(region)) region.copy_(work);
  return self.dim() ? out : out.reshape({});
}

Tensor flat_true_positions(const Tensor& mask) {
  const Tensor host = mask.to(Device("cpu")).contiguous();
  const bool* m = ops::dense_operand<bool>(host);
  int64_t count = 0;
  for (int64_t i = 0; i < host.numel(); ++i) count += m[i] ? 1 : 0;
  Tensor pos = empty({count}, TensorOptions().dtype(DType::Int64));
  int64_t* p = ops::dense_result<int64_t>(pos);
  for (int64_t i = 0, j = 0; i < host.numel(); ++i)
    if (m[i]) p[j++] = i;
  return pos.to(mask.device());
}

}  // namespace ops

namespace {

std::string dtype_word(DType d) { return std::string(dtype_name(d)); }

void check_bool_mask(OpId op, const Tensor& mask) {
  if (mask.dtype() != DType::Bool)
    throw DTypeError(ops::op_prefix(op) + "expected a bool mask, got " + dtype_word(mask.dtype()) +
                     " (compare first: `x > 0` gives one)");
}

// scatter's and scatter_add's shape rules, worded as PyTorch's.
void check_scatter_shapes(OpId op, const Tensor& self, int64_t d, const Tensor& index, const Tensor* src) {
  const std::string name(ops::op_name(op));
  if (index.dtype() != DType::Int64)
    throw DTypeError(ops::op_prefix(op) + name + "(): Expected dtype int64 for index, got " + dtype_word(index.dtype()));
  if (src && src->dtype() != self.dtype())
    throw DTypeError(ops::op_prefix(op) + name + "(): Expected self.dtype to be equal to src.dtype, got " + dtype_word(self.dtype()) +
                     " and " + dtype_word(src->dtype()));
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  if (std::max<int64_t>(index.dim(), 1) != nd)
    throw ShapeError(ops::op_prefix(op) + "Index tensor must have the same number of dimensions as self tensor");
  if (src && std::max<int64_t>(src->dim(), 1) != nd)
    throw ShapeError(ops::op_prefix(op) + "Index tensor must have the same number of dimensions as src tensor");
  if (index.numel() == 0) return;
  auto size = [](const Tensor& t, int64_t i) { return t.dim() ? t.size(i) : 1; };
  bool self_ok = true, src_ok = true;
  for (int64_t i = 0; i < nd; ++i) {
    if (i != d && size(index, i) > size(self, i)) self_ok = false;
    if (src && size(index, i) > size(*src, i)) src_ok = false;
  }
  if (self_ok && src_ok) return;
  std::ostringstream os;
  os << ops::op_prefix(op) << "Expected index " << index.shape() << " to be smaller than self " << self.shape() << " apart from dimension "
     << d;
  if (src) os << " and to be smaller size than src " << src->shape();
  throw ShapeError(os.str());
}

Tensor scatter_impl(OpId op, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  ops::common_device(op, {{self, "self"}, {index, "index"}, {src, "src"}});
  const int64_t d = ops::wrap_dim(dim, self.dim(), op);
  check_scatter_shapes(op, self, d, index, &src);
  Tensor out = ops::run_scatter(op, self, d, index, src);
  if (self.is_floating_point() && autograd::needs_grad({&self, &src})) {
    if (op == OpId::Scatter) autograd::record_scatter(self, d, index, src, out);
    else autograd::record_scatter_add(self, d, index, src, false, 1, out);
  }
  return out;
}

}  // namespace

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) { return scatter_impl(OpId::Scatter, x, dim, index, src); }

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  ops::common_device(OpId::Scatter, {{x, "self"}, {index, "index"}});
  const int64_t d = ops::wrap_dim(dim, x.dim(), OpId::Scatter);
  check_scatter_shapes(OpId::Scatter, x, d, index, nullptr);
  // The value fills a source of the index's shape (a broadcast view: nothing is allocated
  // until the kernel's contiguous copy, which is the index's size).
  const Tensor src = full({}, value, TensorOptions().dtype(x.dtype()).device(x.device())).expand(index.shape());
  Tensor out = ops::run_scatter(OpId::Scatter, x, d, index, src);
  if (x.is_floating_point() && autograd::needs_grad({&x})) autograd::record_scatter(x, d, index, Tensor(), out);
  return out;
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_impl(OpId::ScatterAdd, x, dim, index, src);
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  const OpId op = OpId::IndexAdd;
  ops::common_device(op, {{x, "self"}, {index, "index"}, {source, "source"}});
  const int64_t d = ops::wrap_dim(dim, x.dim(), op);
  if (index.dtype() != DType::Int64 && index.dtype() != DType::Int32)
    throw DTypeError(ops::op_prefix(op) + "index_add_(): Expected dtype int32/int64 for index, got " + dtype_word(index.dtype()));
  if (index.dim() > 1) throw ShapeError(ops::op_prefix(op) + "index_add_(): Index is supposed to be a vector");
  if (source.dtype() != x.dtype())
    throw DTypeError(ops::op_prefix(op) + "index_add_(): self (" + dtype_word(x.dtype()) + ") and source (" + dtype_word(source.dtype()) +
                     ") must have the same scalar type");
  const int64_t nd = std::max<int64_t>(x.dim(), 1);
  const Tensor src = source.dim() ? source : source.reshape({1});
  const Tensor self = x.dim() ? x : x.reshape({1});
  bool ok = std::max<int64_t>(source.dim(), 1) == nd;
  for (int64_t i = 0; ok && i < nd; ++i) ok = i == d || src.size(i) == self.size(i);
  if (!ok) {
    std::ostringstream os;
    os << ops::op_prefix(op) << "index_add_(): source " << source.shape() << " must have the shape of self " << x.shape()
       << " apart from dimension " << d;
    throw ShapeError(os.str());
  }
  if (src.size(d) != index.numel())
    throw ShapeError(ops::op_prefix(op) + "index_add_(): Number of indices (" + std::to_string(index.numel()) +
                     ") should be equal to source.size(dim): (" + std::to_string(src.size(d)) + "), for dim: " + std::to_string(d));
  Tensor scaled = source;
  const bool unit = alpha.to<double>() == 1;
  if (!unit) {
    NoGradGuard no_grad;
    scaled = mul(source, alpha).to(x.dtype());
  }
  Tensor out = ops::run_scatter(op, x, d, index.to(DType::Int64).reshape({-1}), scaled);
  if (x.is_floating_point() && autograd::needs_grad({&x, &source}))
    autograd::record_scatter_add(x, d, index.to(DType::Int64).reshape({-1}), source, true, alpha.to<double>(), out);
  return out;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value) {
  ops::common_device(OpId::MaskedFill, {{x, "self"}, {mask, "mask"}});
  check_bool_mask(OpId::MaskedFill, mask);
  const detail::PublicOpScope scope("masked_fill");
  return where(mask, full({}, value, TensorOptions().dtype(x.dtype()).device(x.device())), x);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value) {
  if (value.dim() != 0)
    throw ShapeError(ops::op_prefix(OpId::MaskedFill) + "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with " +
                     std::to_string(value.dim()) + " dimension(s).");
  ops::common_device(OpId::MaskedFill, {{x, "self"}, {mask, "mask"}});
  check_bool_mask(OpId::MaskedFill, mask);
  const detail::PublicOpScope scope("masked_fill");
  // As PyTorch, a 0-dim value may live on the CPU whatever x's device.
  return where(mask, value.to(x.device(), x.dtype()), x);
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  ops::common_device(OpId::MaskedSelect, {{x, "self"}, {mask, "mask"}});
  check_bool_mask(OpId::MaskedSelect, mask);
  const Shape shape = ops::broadcast_shapes(x.shape(), mask.shape(), OpId::MaskedSelect);
  const detail::PublicOpScope scope("masked_select");
  return index_select(x.expand(shape).reshape({-1}), 0, ops::flat_true_positions(mask.expand(shape)));
}

Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  const OpId op = OpId::MaskedScatter;
  ops::common_device(op, {{x, "self"}, {mask, "mask"}, {source, "source"}});
  check_bool_mask(op, mask);
  if (source.dtype() != x.dtype())
    throw DTypeError(ops::op_prefix(op) + "masked_scatter: expected self and source to have same dtypes but got " + dtype_word(x.dtype()) +
                     " and " + dtype_word(source.dtype()));
  const Shape shape = ops::broadcast_shapes(x.shape(), mask.shape(), op);
  const detail::PublicOpScope scope("masked_scatter");
  const Tensor self = x.expand(shape);
  const Tensor m = mask.expand(shape);
  const Tensor pos = ops::flat_true_positions(m);
  if (source.numel() < pos.numel()) throw ValueError(ops::op_prefix(op) + "Number of elements of source < number of ones in mask");
  Tensor out;
  {
    NoGradGuard no_grad;
    const Tensor flat_src = source.reshape({-1}).narrow(0, 0, pos.numel());
    out = ops::run_scatter(OpId::Scatter, self.reshape({-1}), 0, pos, flat_src).view(shape);
  }
  if (x.is_floating_point() && autograd::needs_grad({&self, &source})) autograd::record_masked_scatter(self, m, source, out);
  return out;
}

Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int64_t> dim) {
  const OpId op = OpId::TakeAlongDim;
  ops::common_device(op, {{x, "self"}, {indices, "indices"}});
  if (indices.dtype() != DType::Int64)
    throw DTypeError(ops::op_prefix(op) + "torch.take_along_dim(): dtype of indices should be Long but got " + dtype_word(indices.dtype()));
  const detail::PublicOpScope scope("take_along_dim");
  if (!dim) return gather(x.reshape({-1}), 0, indices.reshape({-1}));
  const int64_t d = ops::wrap_dim(*dim, x.dim(), op);
  if (x.dim() != indices.dim())
    throw ShapeError(ops::op_prefix(op) + "torch.take_along_dim(): input and indices should have the same number of dimensions, but got " +
                     std::to_string(x.dim()) + " dimensions for input, and " + std::to_string(indices.dim()) + " dimensions for indices");
  if (x.dim() == 0) return gather(x, 0, indices);
  Shape xs = x.shape();
  xs[static_cast<size_t>(d)] = indices.size(d);
  const Shape shape = ops::broadcast_shapes(xs, indices.shape(), op);
  Shape xe = shape;
  xe[static_cast<size_t>(d)] = x.size(d);
  return gather(x.expand(xe), d, indices.expand(shape));
}

Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  Tensor out;
  {
    NoGradGuard no_grad;  // index_put_ writes into a copy; the recorded op is index_put itself
    out = x.clone();
    out.index_put_(indices, values, accumulate);
  }
  if (x.is_floating_point() && autograd::needs_grad({&x, &values})) autograd::record_index_put(x, indices, values, accumulate, out);
  return out;
}

// ---- methods -------------------------------------------------------------------------------

namespace {

// The in-place forms: the out-of-place result, which must keep self's shape, written back.
Tensor& write_back(Tensor& self, const Tensor& result, OpId op) {
  if (!(result.shape() == self.shape())) {
    std::ostringstream os;
    os << ops::op_prefix(op) << "output with shape " << self.shape() << " doesn't match the broadcast shape " << result.shape();
    throw ShapeError(os.str());
  }
  self.copy_(result);
  return self;
}

}  // namespace

Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const { return locus::masked_fill(*this, mask, value); }
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const { return locus::masked_fill(*this, mask, value); }
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) {
  if (autograd::record_in_place(*this, "masked_fill_", {}, [&] { return locus::masked_fill(*this, mask, value); })) return *this;
  autograd::check_write(*this, "masked_fill_");
  return write_back(*this, locus::masked_fill(*this, mask, value), OpId::MaskedFill);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& value) {
  if (autograd::record_in_place(*this, "masked_fill_", {}, [&] { return locus::masked_fill(*this, mask, value); })) return *this;
  autograd::check_write(*this, "masked_fill_");
  return write_back(*this, locus::masked_fill(*this, mask, value), OpId::MaskedFill);
}
Tensor Tensor::masked_select(const Tensor& mask) const { return locus::masked_select(*this, mask); }
Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const { return locus::masked_scatter(*this, mask, source); }
Tensor& Tensor::masked_scatter_(const Tensor& mask, const Tensor& source) {
  if (autograd::record_in_place(*this, "masked_scatter_", {&source}, [&] { return locus::masked_scatter(*this, mask, source); })) return *this;
  autograd::check_write(*this, "masked_scatter_");
  return write_back(*this, locus::masked_scatter(*this, mask, source), OpId::MaskedScatter);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const { return locus::scatter(*this, dim, index, src); }
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Scalar& value) const { return locus::scatter(*this, dim, index, value); }
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) {
  if (autograd::record_in_place(*this, "scatter_", {&src}, [&] { return locus::scatter(*this, dim, index, src); })) return *this;
  autograd::check_write(*this, "scatter_");
  return write_back(*this, locus::scatter(*this, dim, index, src), OpId::Scatter);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Scalar& value) {
  if (autograd::record_in_place(*this, "scatter_", {}, [&] { return locus::scatter(*this, dim, index, value); })) return *this;
  autograd::check_write(*this, "scatter_");
  return write_back(*this, locus::scatter(*this, dim, index, value), OpId::Scatter);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const { return locus::scatter_add(*this, dim, index, src); }
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  if (autograd::record_in_place(*this, "scatter_add_", {&src}, [&] { return locus::scatter_add(*this, dim, index, src); })) return *this;
  autograd::check_write(*this, "scatter_add_");
  return write_back(*this, locus::scatter_add(*this, dim, index, src), OpId::ScatterAdd);
}
Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) const {
  return locus::index_add(*this, dim, index, source, alpha);
}
Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  if (autograd::record_in_place(*this, "index_add_", {&source}, [&] { return locus::index_add(*this, dim, index, source, alpha); })) return *this;
  autograd::check_write(*this, "index_add_");
  return write_back(*this, locus::index_add(*this, dim, index, source, alpha), OpId::IndexAdd);
}
Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<int64_t> dim) const { return locus::take_along_dim(*this, indices, dim); }
Tensor Tensor::index_put(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) const {
  return locus::index_put(*this, indices, values, accumulate);
}

}  // namespace locus
