#pragma once
// The backward formulas, recorded by the op front ends when autograd::needs_grad() says so.

#include <optional>
#include <vector>

#include "locus/scalar.h"
#include "locus/tensor.h"
#include "src/ops/kernel_table.h"

namespace locus::autograd {

/// An elementwise op of the op table (or where) with `n` tensor inputs and its scalars, when an
/// input needs grad: the backward is the table's derivative expression. A scalar second operand
/// of a binary op is a constant.
void record_elementwise(ops::OpId op, const Tensor* const* inputs, int n, const ops::ElementwiseScalars& scalars,
                        const Tensor& out);
/// A reduction of the op table (LOCUS_REDUCE_OPS) of `x` over the dims marked in `reduced`:
/// the backward is the table's derivative expression.
void record_reduction(ops::OpId op, const Tensor& x, const std::vector<bool>& reduced, bool keepdim,
                      const ops::fn::ReduceParams& params, const Tensor& out);
/// The product of the nonzero elements of `x` over the dims `red`, kept as size 1 (prod's backward).
Tensor prod_of_nonzero(const Tensor& x, const Shape& red);
void record_softmax(bool log, int64_t dim, const Tensor& x, const Tensor& out);
/// max / min: along `dim` the gradient goes to the position in `indices`; over all elements it
/// is shared evenly among the elements equal to the result (as PyTorch).
void record_extreme(const Tensor& x, std::optional<int64_t> dim, bool keepdim, const Tensor& values,
                    const Tensor& indices);
/// sort, topk, kthvalue, median: `values` are the elements of x at `indices` along `dim`, so
/// the gradient goes back to those positions (`whole`: the indices are a full permutation).
void record_selection(const Tensor& x, int64_t dim, bool whole, const Tensor& values, const Tensor& indices);
/// cumsum or cumprod of x along `dim` (cumprod's gradient exact where elements are zero).
void record_scan(bool prod, const Tensor& x, int64_t dim, const Tensor& out);
/// Batched product of a [..., m, k] and b [..., k, n] (batch dims broadcast).
void record_matmul(const Tensor& a, const Tensor& b, const Tensor& out);
/// A move to another device or dtype: the gradient goes back to where x lived, as x's dtype.
void record_to(const Tensor& x, const Tensor& out);
void record_cat(const std::vector<Tensor>& inputs, int64_t dim, const Tensor& out);
/// A view or copy whose gradient is `grad_of_input(grad)`.
void record_view(const char* name, const Tensor& x, const Tensor& out, std::function<Tensor(const Tensor&)> grad_of_input);

}  // namespace locus::autograd
