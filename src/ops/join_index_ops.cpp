// cat, stack, index_select and gather.

#include <sstream>

#include "locus/errors.h"
#include "locus/ops.h"
#include "locus/autograd.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
#include "src/core/public_op.h"
#include "src/ops/deferred_check.h"
#include "src/ops/dispatch.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/structured_call.h"

namespace locus {

using ops::OpId;

Tensor cat(const std::vector<Tensor>& given, int64_t dim) {
  if (given.empty()) throw ValueError(ops::op_prefix(OpId::Cat) + "expected a non-empty list of tensors");
  ops::common_device(OpId::Cat, given);
  // As PyTorch: an empty 1-D tensor joins any list (a common start for a loop that
  // concatenates), skipped when the others have more dims.
  std::vector<Tensor> tensors;
  std::vector<size_t> positions;  // in `given`, for messages
  DType dtype = given[0].dtype();
  for (size_t i = 0; i < given.size(); ++i) {
    dtype = promote_types(dtype, given[i].dtype());
    if (given[i].dim() == 1 && given[i].numel() == 0) continue;
    tensors.push_back(given[i]);
    positions.push_back(i);
  }
  if (tensors.empty()) tensors.push_back(given[0]), positions.push_back(0);
  const Tensor& first = tensors[0];
  const int64_t d = ops::wrap_dim(dim, first.dim(), OpId::Cat);
  Shape shape = first.shape();
  if (first.dim() == 0) throw ShapeError(ops::op_prefix(OpId::Cat) + "zero-dimensional tensors cannot be concatenated; use stack");
  shape[static_cast<size_t>(d)] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    bool ok = t.dim() == first.dim();
    for (int64_t j = 0; ok && j < t.dim(); ++j) ok = j == d || t.size(j) == first.size(j);
    if (!ok) {
      std::ostringstream os;
      os << ops::op_prefix(OpId::Cat) << "tensors[" << positions[i] << "] has shape " << t.shape() << ", which does not match " << first.shape()
         << " outside dimension " << d;
      throw ShapeError(os.str());
    }
    if (__builtin_add_overflow(shape[static_cast<size_t>(d)], t.size(d), &shape[static_cast<size_t>(d)]))
      throw ShapeError(ops::op_prefix(OpId::Cat) + "the concatenated size along dimension " + std::to_string(d) + " overflows int64");
  }
  Tensor out = ops::empty_on(shape, dtype, first.device());
  {
    NoGradGuard no_grad;  // cat is the recorded op, not the copies into its slices
    int64_t offset = 0;
    for (const Tensor& t : tensors) {
      out.narrow(d, offset, t.size(d)).copy_(t);
      offset += t.size(d);
    }
  }
  if (is_floating_point(dtype) && autograd::needs_grad(tensors)) autograd::record_cat(tensors, d, out);
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  // Built on cat, whose errors then name stack (Note [Public op names]).
  const detail::PublicOpScope scope("stack");
  if (tensors.empty()) throw ValueError(ops::op_prefix(OpId::Stack) + "expected a non-empty list of tensors");
  ops::common_device(OpId::Stack, tensors);
  const int64_t d = ops::wrap_dim(dim, tensors[0].dim() + 1, OpId::Stack);
  std::vector<Tensor> expanded;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!(tensors[i].shape() == tensors[0].shape())) {
      std::ostringstream os;
      os << ops::op_prefix(OpId::Stack) << "expects each tensor to be equal size, but got " << tensors[0].shape() << " at entry 0 and "
         << tensors[i].shape() << " at entry " << i;
      throw ShapeError(os.str());
    }
    expanded.push_back(tensors[i].unsqueeze(d));
  }
  return cat(expanded, d);
}

namespace {

Tensor index_impl(OpId op, const Tensor& x, int64_t dim, const Tensor& index) {
  const ops::StructuredCall call(op, {{x, "self"}, {index, "index"}});
  if (op == OpId::Gather && index.dtype() != DType::Int64)
    throw DTypeError(ops::op_prefix(OpId::Gather) + "index must be int64, got " + std::string(dtype_name(index.dtype())));
  if (index.dtype() != DType::Int64 && index.dtype() != DType::Int32)
    throw DTypeError(ops::op_prefix(op) + "index must be int64 or int32, got " + std::string(dtype_name(index.dtype())));
  const int64_t d = ops::wrap_dim(dim, x.dim(), op);
  if (op == OpId::IndexSelect && index.dim() > 1)
    throw ShapeError(ops::op_prefix(OpId::IndexSelect) + "index must be 1-D, got " + std::to_string(index.dim()) + " dims");
  if (op == OpId::Gather && index.dim() != x.dim())
    throw ShapeError(ops::op_prefix(OpId::Gather) + "index must have as many dims as the input (" + std::to_string(x.dim()) + "), got " +
                     std::to_string(index.dim()));
  const ops::KernelTable* k = call.kernels(x.dtype());
  if (!k) return call.fall_back([&](const Tensor& hx, const Tensor& hi) { return index_impl(op, hx, dim, hi); }, x, index);
  Tensor source = x;
  if (op == OpId::Gather) {
    // An index smaller than x off `dim` reads the leading part of x there, as torch.gather.
    for (int64_t i = 0; i < x.dim(); ++i) {
      if (i == d) continue;
      if (index.size(i) > x.size(i)) {
        std::ostringstream os;
        os << ops::op_prefix(OpId::Gather) << "index shape " << index.shape() << " must not be larger than the input shape " << x.shape()
           << " outside dimension " << d;
        throw ShapeError(os.str());
      }
      if (index.size(i) < x.size(i)) source = source.narrow(i, 0, index.size(i));
    }
  }
  const Tensor in = source.contiguous();
  const Tensor idx = index.to(DType::Int64).contiguous();
  // cpu and sim kernels check every index before writing; cuda checks on the device without
  // waiting (Note [Deferred checks]).
  const int64_t in_dim = in.dim() ? in.size(d) : 1;
  // Along an empty dim every index is out of range, and a deferred check would let the kernel
  // read element 0 of an empty source: raise now, naming the first index (one read, on this
  // error path only).
  if (in_dim == 0 && idx.numel() > 0)
    ops::raise_failed_check(op, ops::CheckKind::IndexOutOfBounds, idx.reshape({-1})[0].item<int64_t>(), 0, call.device(),
                            false);
  if (k->defer_check) ops::check_range(op, ops::CheckKind::IndexOutOfBounds, idx, in_dim);
  Shape out_shape = x.shape();
  if (x.dim() == 0) out_shape = Shape{};
  ops::IndexArgs a;
  a.op = op;
  a.device = call.device_index();
  a.dtype = x.dtype();
  a.outer = 1, a.inner = 1;
  for (int64_t i = 0; i < d; ++i) a.outer *= in.size(i);
  for (int64_t i = d + 1; i < in.dim(); ++i) a.inner *= in.size(i);
  a.in_dim = in.dim() ? in.size(d) : 1;
  if (op == OpId::IndexSelect) {
    a.out_dim = idx.numel();
    if (x.dim()) out_shape[static_cast<size_t>(d)] = a.out_dim;
  } else {
    out_shape = index.shape();
    a.out_dim = x.dim() ? index.size(d) : 1;
  }
  Tensor out = call.output(out_shape, x.dtype());
  a.in = ops::dense_operand(in);
  a.out = ops::dense_result(out);
  a.index = ops::dense_operand<int64_t>(idx);
  call.wait_for_inputs();
  ops::wait_for_host(in);
  ops::wait_for_host(idx);
  k->index(a);
  if (is_floating_point(x.dtype()) && call.needs_grad()) autograd::record_pick(op != OpId::IndexSelect, x, dim, index, out);
  return call.finish(out);
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) { return index_impl(OpId::IndexSelect, x, dim, index); }
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) { return index_impl(OpId::Gather, x, dim, index); }

}  // namespace locus
