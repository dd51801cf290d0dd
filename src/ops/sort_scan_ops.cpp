// Front ends of sort, argsort, topk, kthvalue, median (the Sort family) and cumsum, cumprod (the
// Scan family). Both families work on rows: the op's dim is moved last and made contiguous, the
// kernel walks [rows, n], and the result is moved back (Note [Structured op path]).

#include <algorithm>
#include <limits>
#include <sstream>
#include <string>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
#include "src/ops/autocast.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/public_op.h"
#include "src/ops/structured_call.h"

namespace locus {
namespace {

using ops::OpId;

// `x` with `dim` last and its rows contiguous ([..., n]); 0-dim as one element.
Tensor rows_of(const Tensor& x, int64_t dim) {
  if (x.dim() == 0) return x.reshape(Shape{1});
  return x.transpose(dim, -1).contiguous();
}
// A result laid out by rows_of back in `x`'s dim order (transpose is its own inverse).
Tensor from_rows(const Tensor& rows, const Tensor& x, int64_t dim) {
  if (x.dim() == 0) return rows.reshape(Shape{});
  if (dim == x.dim() - 1) return rows;
  return rows.transpose(dim, -1).contiguous();
}

// The first k of the sorted rows of `x` along `dim` (k = n: the whole sort).
ValuesIndices sort_rows(OpId op, const Tensor& x, int64_t dim, bool descending, int64_t k) {
  const ops::StructuredCall call(op, {{x, "self"}});
  const int64_t d = ops::wrap_dim(dim, x.dim(), op);
  const int64_t n = x.dim() ? x.size(d) : 1;
  if (k < 0 || k > n)
    throw IndexError(ops::op_prefix(op) + "k (" + std::to_string(k) + ") is out of range for a dimension of size " +
                     std::to_string(n));
  const ops::KernelTable* kt = call.kernels(x.dtype());
  if (!kt) return call.fall_back([&](const Tensor& host) { return sort_rows(op, host, dim, descending, k); }, x);
  const Tensor rows = rows_of(x, d);
  Shape out_shape = rows.shape();
  out_shape[out_shape.size() - 1] = k;
  ValuesIndices r{call.output(out_shape, x.dtype()), call.output(out_shape, DType::Int64)};
  ops::SortArgs a;
  a.op = op;
  a.device = call.device_index();
  a.dtype = x.dtype();
  a.in = ops::dense_operand(rows);
  a.values = ops::dense_result(r.values);
  a.indices = ops::dense_result<int64_t>(r.indices);
  a.n = n, a.k = k, a.rows = n ? rows.numel() / n : 0;
  a.descending = descending;
  call.wait_for_inputs();
  ops::wait_for_host(rows);
  if (a.rows > 0 && k > 0) kt->sort(a);
  r.values = from_rows(r.values, x, d);
  r.indices = from_rows(r.indices, x, d);
  if (is_floating_point(x.dtype()) && call.needs_grad()) autograd::record_selection(x, d, k == n, r.values, r.indices);
  return r;
}

Tensor scan(OpId op, const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  if (ops::autocast_active() && !dtype)
    return ops::autocast(op, [&](const Tensor& in) { return scan(op, in, dim, dtype); }, x);
  const ops::StructuredCall call(op, {{x, "self"}});
  const int64_t d = ops::wrap_dim(dim, x.dim(), op);
  // As PyTorch: integers and bool accumulate in int64, floats in their own dtype.
  const DType result = dtype.value_or(is_floating_point(x.dtype()) ? x.dtype() : DType::Int64);
  if (result != DType::Int64 && !is_floating_point(result))
    throw DTypeError(ops::op_prefix(op) + "accumulates in int64 or a floating dtype, not " + std::string(dtype_name(result)));
  const ops::KernelTable* kt = call.kernels(result);
  if (!kt) return call.fall_back([&](const Tensor& host) { return scan(op, host, dim, dtype); }, x);
  Tensor converted = x;
  if (result != x.dtype()) {
    NoGradGuard no_grad;  // the scan is the recorded op; its backward converts back to x's dtype
    converted = x.to(result);
  }
  const Tensor rows = rows_of(converted, d);
  Tensor out = call.output(rows.shape(), result);
  ops::ScanArgs a;
  a.op = op;
  a.device = call.device_index();
  a.dtype = result;
  a.in = ops::dense_operand(rows);
  a.out = ops::dense_result(out);
  a.n = x.dim() ? x.size(d) : 1;
  a.rows = a.n ? rows.numel() / a.n : 0;
  call.wait_for_inputs();
  ops::wait_for_host(rows);
  if (rows.numel()) kt->scan(a);
  out = from_rows(out, x, d);
  if (is_floating_point(result) && call.needs_grad()) autograd::record_scan(op == OpId::Cumprod, x, d, out);
  return out;
}

// The k-th smallest along `dim` (1-based), from the first k of the ascending sort.
ValuesIndices kth_along(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  const int64_t d = ops::wrap_dim(dim, x.dim(), OpId::Sort);
  const int64_t n = x.dim() ? x.size(d) : 1;
  if (k < 1 || k > n)
    throw IndexError("[locus::kthvalue] k (" + std::to_string(k) + ") is out of range for a dimension of size " +
                     std::to_string(n) + " (k counts from 1)");
  ValuesIndices first = sort_rows(OpId::Topk, x, d, /*descending=*/false, k);
  ValuesIndices r{first.values.narrow(x.dim() ? d : 0, k - 1, 1), first.indices.narrow(x.dim() ? d : 0, k - 1, 1)};
  if (x.dim() == 0) return {first.values, first.indices};
  if (!keepdim) r.values = r.values.squeeze(d), r.indices = r.indices.squeeze(d);
  return r;
}

}  // namespace

ValuesIndices sort(const Tensor& x, int64_t dim, bool descending) {
  if (x.dim() == 0) {
    ops::wrap_dim(dim, 0, OpId::Sort);
  }
  return sort_rows(OpId::Sort, x, dim, descending, x.dim() ? x.size(ops::wrap_dim(dim, x.dim(), OpId::Sort)) : 1);
}
ValuesIndices sort(const Tensor& x, bool /*stable*/, int64_t dim, bool descending) { return sort(x, dim, descending); }
Tensor argsort(const Tensor& x, int64_t dim, bool descending) { return sort(x, dim, descending).indices; }
Tensor argsort(const Tensor& x, bool /*stable*/, int64_t dim, bool descending) { return sort(x, dim, descending).indices; }

ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  return sort_rows(OpId::Topk, x, dim, /*descending=*/largest, k);
}

ValuesIndices kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  const ops::PublicOp op("kthvalue", {{x, "self"}});
  return kth_along(x, k, dim, keepdim);
}

ValuesIndices median(const Tensor& x, int64_t dim, bool keepdim) {
  const ops::PublicOp op("median", {{x, "self"}});
  const int64_t d = ops::wrap_dim(dim, x.dim(), OpId::Sort);
  const int64_t n = x.dim() ? x.size(d) : 1;
  if (n == 0)
    throw IndexError("[locus::median] expected reduction dim " + std::to_string(dim) + " to have non-zero size");
  // The lower median of the ascending sort; a row holding NaN gives its first NaN (NaN sorts
  // last, so that is the count of numbers), as PyTorch's median propagates NaN. Computed without
  // a graph: the result records its own backward, to the positions it took.
  const bool record = is_floating_point(x.dtype()) && autograd::needs_grad({&x});
  ValuesIndices r;
  {
    NoGradGuard selecting;
    const ValuesIndices sorted = sort_rows(OpId::Sort, x, d, /*descending=*/false, n);
    const int64_t along = x.dim() ? d : 0;
    const Tensor values = x.dim() ? sorted.values : sorted.values.reshape(Shape{1});
    const Tensor indices = x.dim() ? sorted.indices : sorted.indices.reshape(Shape{1});
    const Tensor numbers = count_nonzero(eq(values, values), Shape{along}).unsqueeze(along);
    const Tensor position = where(lt(numbers, n), numbers, full_like(numbers, (n - 1) / 2));
    r = {gather(values, along, position), gather(indices, along, position)};
  }
  if (x.dim() == 0) r = {r.values.reshape(Shape{}), r.indices.reshape(Shape{})};
  else if (!keepdim) r.values = r.values.squeeze(d), r.indices = r.indices.squeeze(d);
  if (record) autograd::record_selection(x, d, /*whole=*/false, r.values, r.indices);
  return r;
}

Tensor median(const Tensor& x) {
  const ops::PublicOp op("median", {{x, "self"}});
  if (x.numel() == 0) {  // as PyTorch: NaN for floats; integers have no NaN
    if (!is_floating_point(x.dtype()))
      throw IndexError("[locus::median] expected a tensor with elements (an integer median of nothing has no value)");
    return full({}, std::numeric_limits<double>::quiet_NaN(), x.options());
  }
  return median(x.reshape(Shape{-1}), 0, false).values;
}

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype) { return scan(OpId::Cumsum, x, dim, dtype); }
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype) { return scan(OpId::Cumprod, x, dim, dtype); }

ValuesIndices Tensor::sort(int64_t dim, bool descending) const { return locus::sort(*this, dim, descending); }
Tensor Tensor::argsort(int64_t dim, bool descending) const { return locus::argsort(*this, dim, descending); }
ValuesIndices Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return locus::topk(*this, k, dim, largest, sorted);
}
ValuesIndices Tensor::kthvalue(int64_t k, int64_t dim, bool keepdim) const { return locus::kthvalue(*this, k, dim, keepdim); }
Tensor Tensor::median() const { return locus::median(*this); }
ValuesIndices Tensor::median(int64_t dim, bool keepdim) const { return locus::median(*this, dim, keepdim); }
Tensor Tensor::cumsum(int64_t dim, std::optional<DType> dtype) const { return locus::cumsum(*this, dim, dtype); }
Tensor Tensor::cumprod(int64_t dim, std::optional<DType> dtype) const { return locus::cumprod(*this, dim, dtype); }

}  // namespace locus
