// Front ends of the reductions (the op table's LOCUS_REDUCE_OPS), max, min, argmax, argmin,
// softmax and log_softmax.

#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/ops.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
#include "src/ops/autocast.h"
#include "src/ops/dispatch.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/reduce_rules.h"
#include "src/ops/structured_call.h"

namespace locus {
namespace {

using ops::OpId;

// 1 on each dim of x that `dims` reduces (all of them when `dims` is empty), 0 elsewhere: a
// Shape, so that the flags of up to six dims need no allocation (a reduction of one element
// costs ~2,400 instructions, docs/performance.md).
Shape reduced_dims(const Tensor& x, const Shape& dims, OpId op) {
  Shape reduced(static_cast<size_t>(x.dim()), dims.empty() ? 1 : 0);
  for (int64_t d : dims) {
    const int64_t w = ops::wrap_dim(d, x.dim(), op);
    if (x.dim() == 0) continue;
    if (reduced[static_cast<size_t>(w)] && !dims.empty() && std::count(dims.begin(), dims.end(), d) > 1)
      throw ValueError(ops::op_prefix(op) + "dim " + std::to_string(d) + " appears more than once");
    reduced[static_cast<size_t>(w)] = 1;
  }
  return reduced;
}

// Note [Reduction front end]
// Every reduction of the op table runs through reduce(): the dims, keepdim and the dtype rule
// (its ReduceRule column) give the output's shape and dtypes, StructuredCall does the device,
// kernel-or-fallback, out= and recording steps (Note [Structured op path]), and the backward is
// the table's derivative column (src/autograd/reduce_derivatives.cpp). The kernel folds the
// functor fn::<Id> (src/ops/reduce_functors.h) over a strided view of the input.

Tensor reduce(OpId op, const Tensor& x, const Shape& dims, bool keepdim, std::optional<DType> dtype,
              const ops::fn::ReduceParams& params = {}, Tensor out = Tensor()) {
  if (ops::autocast_active() && !out.defined())
    return ops::autocast(op, [&](const Tensor& in) { return reduce(op, in, dims, keepdim, dtype, params); }, x);
  const ops::StructuredCall call(op, {{x, "self"}}, out);
  const ops::ReduceDtypes dt = ops::resolve_reduce_dtypes(op, x.dtype(), dtype);
  const Shape reduced = reduced_dims(x, dims, op);
  Shape out_shape;
  int64_t reduce_numel = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (reduced[static_cast<size_t>(d)]) {
      reduce_numel *= x.size(d);
      if (keepdim) out_shape.push_back(1);
    } else {
      out_shape.push_back(x.size(d));
    }
  }
  if (ops::reduce_needs_elements(op) && reduce_numel == 0 && out_shape.numel() != 0) {
    std::ostringstream os;
    os << ops::op_prefix(op) << "expected the reduced dims of an input of shape " << x.shape()
       << " to have non-zero size (there is no " << ops::op_name(op) << " of nothing)";
    throw IndexError(os.str());
  }
  const ops::KernelTable* k = call.kernels(dt.compute);
  if (!k)
    return call.fall_back([&](const Tensor& host) { return reduce(op, host, dims, keepdim, dtype, params); }, x);
  Tensor in = x;
  if (dt.compute != x.dtype()) {
    NoGradGuard no_grad;  // the reduction is the recorded op; its backward converts back to x's dtype
    in = x.to(dt.compute);
  }
  Tensor result = call.output(out_shape, dt.result);
  ops::ReduceArgs a;
  a.op = op;
  a.device = call.device_index();
  a.params = params;
  a.in_dtype = in.dtype();
  a.out_dtype = dt.result;
  a.in = ops::strided_operand(in);  // with in_strides below
  a.out = ops::dense_result(result);
  a.out_numel = result.numel();
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
  ops::wait_for_host(in);  // x itself, or its conversion (which waited for x)
  k->reduce(a);
  if (is_floating_point(dt.result) && call.needs_grad()) autograd::record_reduction(op, x, reduced, keepdim, !dims.empty(), params, result);
  return call.finish(result);
}

// Max/min/argmax over one dim (or all, dim = nullopt) of a contiguous copy laid out as
// [outer, dim, inner].
ValuesIndices extreme_impl(OpId op, const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  const ops::StructuredCall call(op, {{x, "self"}});
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
  const ops::KernelTable* k = call.kernels(x.dtype());
  if (!k) return call.fall_back([&](const Tensor& host) { return extreme_impl(op, host, dim, keepdim); }, x);
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
  if (want_values) r.values = call.output(out_shape, in.dtype());
  if (want_indices) r.indices = call.output(out_shape, DType::Int64);
  ops::ReduceArgs a;
  a.op = op;
  a.device = call.device_index();
  a.in_dtype = a.out_dtype = in.dtype();
  a.in = ops::dense_operand(in);
  a.out = ops::dense_result(want_values ? r.values : r.indices);
  a.indices = want_values && want_indices ? ops::dense_result(r.indices) : nullptr;
  a.shape = Shape{outer, size, inner};
  call.wait_for_inputs();
  ops::wait_for_host(in);
  k->reduce(a);
  if (want_values && is_floating_point(x.dtype()) && call.needs_grad())
    autograd::record_extreme(op == OpId::Min, x, dim, keepdim, r.values, r.indices);
  return r;
}

}  // namespace

Tensor sum(const Tensor& x, std::optional<DType> dtype) { return reduce(OpId::Sum, x, {}, false, dtype); }
Tensor sum(const Tensor& x, const Shape& dims, bool keepdim, std::optional<DType> dtype) {
  return reduce(OpId::Sum, x, dims, keepdim, dtype);
}
Tensor sum(const Tensor& x, int64_t dim, bool keepdim, std::optional<DType> dtype) {
  return reduce(OpId::Sum, x, Shape{dim}, keepdim, dtype);
}
Tensor mean(const Tensor& x) { return reduce(OpId::Mean, x, {}, false, std::nullopt); }
Tensor mean(const Tensor& x, const Shape& dims, bool keepdim) { return reduce(OpId::Mean, x, dims, keepdim, std::nullopt); }
Tensor mean(const Tensor& x, int64_t dim, bool keepdim) { return reduce(OpId::Mean, x, Shape{dim}, keepdim, std::nullopt); }
Tensor prod(const Tensor& x, std::optional<DType> dtype) { return reduce(OpId::Prod, x, {}, false, dtype); }
Tensor prod(const Tensor& x, int64_t dim, bool keepdim, std::optional<DType> dtype) {
  return reduce(OpId::Prod, x, Shape{dim}, keepdim, dtype);
}

namespace {
// A norm's order as a number: PyTorch's "fro" is 2 over any dims here (the matrix norms, "nuc",
// belong to linalg).
double norm_order(const Scalar& p) { return p.to_double(); }
double norm_order(const char* p) {
  if (std::string_view(p) == "fro") return 2;
  throw ValueError(ops::op_prefix(OpId::Norm) + "unknown order '" + std::string(p) +
                   "'; Locus has the vector norms: a number (inf and -inf included) or \"fro\"");
}
ops::fn::ReduceParams with_order(double p) {
  ops::fn::ReduceParams params;
  params.p = p;
  return params;
}
ops::fn::ReduceParams with_correction(std::optional<int64_t> correction) {
  ops::fn::ReduceParams params;
  params.correction = correction.value_or(1);
  return params;
}
}  // namespace

Tensor norm(const Tensor& x, const Scalar& p) { return reduce(OpId::Norm, x, {}, false, std::nullopt, with_order(norm_order(p))); }
Tensor norm(const Tensor& x, const Scalar& p, const Shape& dims, bool keepdim) {
  return reduce(OpId::Norm, x, dims, keepdim, std::nullopt, with_order(norm_order(p)));
}
Tensor norm(const Tensor& x, const char* p, const Shape& dims, bool keepdim) {
  return reduce(OpId::Norm, x, dims, keepdim, std::nullopt, with_order(norm_order(p)));
}

Tensor var(const Tensor& x, bool unbiased) { return reduce(OpId::Var, x, {}, false, std::nullopt, with_correction(unbiased)); }
Tensor var(const Tensor& x, const Shape& dims, bool unbiased, bool keepdim) {
  return reduce(OpId::Var, x, dims, keepdim, std::nullopt, with_correction(unbiased));
}
Tensor var(const Tensor& x, const std::optional<Shape>& dims, std::optional<int64_t> correction, bool keepdim) {
  return reduce(OpId::Var, x, dims.value_or(Shape{}), keepdim, std::nullopt, with_correction(correction));
}
Tensor std(const Tensor& x, bool unbiased) { return reduce(OpId::Std, x, {}, false, std::nullopt, with_correction(unbiased)); }
Tensor std(const Tensor& x, const Shape& dims, bool unbiased, bool keepdim) {
  return reduce(OpId::Std, x, dims, keepdim, std::nullopt, with_correction(unbiased));
}
Tensor std(const Tensor& x, const std::optional<Shape>& dims, std::optional<int64_t> correction, bool keepdim) {
  return reduce(OpId::Std, x, dims.value_or(Shape{}), keepdim, std::nullopt, with_correction(correction));
}
Tensor var(const Tensor& x, std::initializer_list<int64_t> dims, bool unbiased, bool keepdim) {
  return var(x, Shape(dims), unbiased, keepdim);
}
Tensor std(const Tensor& x, std::initializer_list<int64_t> dims, bool unbiased, bool keepdim) {
  return std(x, Shape(dims), unbiased, keepdim);
}
namespace {
// var_mean and std_mean: the spread (`op`, Var or Std) and the mean over the same dims.
std::tuple<Tensor, Tensor> with_mean(OpId op, const Tensor& x, const Shape& dims, const ops::fn::ReduceParams& correction,
                                     bool keepdim) {
  return {reduce(op, x, dims, keepdim, std::nullopt, correction), mean(x, dims, keepdim)};
}
}  // namespace

// var_mean's and std_mean's four overloads each, written once.
#define LOCUS_SPREAD_WITH_MEAN(name, op)                                                                      \
  std::tuple<Tensor, Tensor> name(const Tensor& x, bool unbiased) {                                          \
    return with_mean(op, x, {}, with_correction(unbiased), false);                                           \
  }                                                                                                          \
  std::tuple<Tensor, Tensor> name(const Tensor& x, std::initializer_list<int64_t> dims, bool unbiased,        \
                                  bool keepdim) {                                                            \
    return with_mean(op, x, Shape(dims), with_correction(unbiased), keepdim);                                \
  }                                                                                                          \
  std::tuple<Tensor, Tensor> name(const Tensor& x, const Shape& dims, bool unbiased, bool keepdim) {         \
    return with_mean(op, x, dims, with_correction(unbiased), keepdim);                                       \
  }                                                                                                          \
  std::tuple<Tensor, Tensor> name(const Tensor& x, const std::optional<Shape>& dims,                         \
                                  std::optional<int64_t> correction, bool keepdim) {                         \
    return with_mean(op, x, dims.value_or(Shape{}), with_correction(correction), keepdim);                   \
  }
LOCUS_SPREAD_WITH_MEAN(var_mean, OpId::Var)
LOCUS_SPREAD_WITH_MEAN(std_mean, OpId::Std)
#undef LOCUS_SPREAD_WITH_MEAN

Tensor any(const Tensor& x) { return reduce(OpId::Any, x, {}, false, std::nullopt); }
Tensor any(const Tensor& x, int64_t dim, bool keepdim) { return reduce(OpId::Any, x, Shape{dim}, keepdim, std::nullopt); }
Tensor all(const Tensor& x) { return reduce(OpId::All, x, {}, false, std::nullopt); }
Tensor all(const Tensor& x, int64_t dim, bool keepdim) { return reduce(OpId::All, x, Shape{dim}, keepdim, std::nullopt); }
Tensor count_nonzero(const Tensor& x, const Shape& dims) { return reduce(OpId::CountNonzero, x, dims, false, std::nullopt); }
Tensor count_nonzero(const Tensor& x, int64_t dim) { return reduce(OpId::CountNonzero, x, Shape{dim}, false, std::nullopt); }

// The plain reductions' functions and methods, generated from their op-table lines.
#define LOCUS_PLAIN_REDUCE_FUNCTIONS(id, name, ...)                                                                  \
  Tensor name(const Tensor& x, const Shape& dims, bool keepdim) { return reduce(OpId::id, x, dims, keepdim, std::nullopt); } \
  Tensor name(const Tensor& x, int64_t dim, bool keepdim) { return reduce(OpId::id, x, Shape{dim}, keepdim, std::nullopt); } \
  Tensor Tensor::name(const Shape& dims, bool keepdim) const { return locus::name(*this, dims, keepdim); }                \
  Tensor Tensor::name(int64_t dim, bool keepdim) const { return locus::name(*this, dim, keepdim); }
LOCUS_PLAIN_REDUCE_OPS(LOCUS_PLAIN_REDUCE_FUNCTIONS)
#undef LOCUS_PLAIN_REDUCE_FUNCTIONS

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
  const ops::StructuredCall call(op, {{x, "self"}});
  const DType dtype = is_floating_point(x.dtype()) ? x.dtype() : get_default_dtype();
  const int64_t d = ops::wrap_dim(dim, x.dim(), op);
  const ops::KernelTable* k = call.kernels(dtype);
  if (!k) return call.fall_back([&](const Tensor& host) { return softmax_impl(op, host, dim); }, x);
  const Tensor in = (x.dtype() == dtype ? x : x.to(dtype)).contiguous();
  Tensor out = call.output(in.shape(), dtype);
  ops::SoftmaxArgs a;
  a.device = call.device_index();
  a.log = op == OpId::LogSoftmax;
  a.dtype = dtype;
  a.in = ops::dense_operand(in);
  a.out = ops::dense_result(out);
  a.outer = 1, a.dim = in.dim() ? in.size(d) : 1, a.inner = 1;
  for (int64_t i = 0; i < d; ++i) a.outer *= in.size(i);
  for (int64_t i = d + 1; i < in.dim(); ++i) a.inner *= in.size(i);
  call.wait_for_inputs();
  ops::wait_for_host(in);
  if (in.numel()) k->softmax(a);
  if (call.needs_grad()) autograd::record_softmax(op == OpId::LogSoftmax, d, x, out);
  return out;
}
}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) { return softmax_impl(OpId::Softmax, x, dim); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return softmax_impl(OpId::LogSoftmax, x, dim); }

}  // namespace locus
