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
/// A reduction of the op table (LOCUS_REDUCE_OPS) of `x` over the dims marked 1 in `reduced`:
/// the backward is the table's derivative expression. `over_dims`: the call named its dims (the
/// overload PyTorch numbers 1 for sum, mean and prod).
void record_reduction(ops::OpId op, const Tensor& x, const Shape& reduced, bool keepdim, bool over_dims,
                      const ops::fn::ReduceParams& params, const Tensor& out);
/// The product of the nonzero elements of `x` over the dims `red`, kept as size 1 (prod's backward).
Tensor prod_of_nonzero(const Tensor& x, const Shape& red);
void record_softmax(bool log, int64_t dim, const Tensor& x, const Tensor& out);
/// max / min: along `dim` the gradient goes to the position in `indices`; over all elements it
/// is shared evenly among the elements equal to the result (as PyTorch).
void record_extreme(bool is_min, const Tensor& x, std::optional<int64_t> dim, bool keepdim, const Tensor& values,
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
/// split, chunk (`unbind` false) or unbind of x along `dim` into `outputs`: one node for all of
/// them (PyTorch's SplitBackward0, SplitWithSizesBackward0, UnbindBackward0), whose backward
/// is one cat (or stack) of the pieces' gradients, zeros for pieces that got none.
void record_split(const char* name, const Tensor& x, int64_t dim, bool unbind, const std::vector<Tensor>& outputs);
/// A view or copy whose gradient is `grad_of_input(grad)`.
void record_view(const char* name, const Tensor& x, const Tensor& out, std::function<Tensor(const Tensor&)> grad_of_input);

/// index_select, or gather when `gather`, along `dim`: x's gradient is the output's gradient
/// added back into zeros where it was picked (index_add, or scatter_add for gather; a position
/// picked twice gets both).
void record_pick(bool gather, const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out);
/// scatter of `src` (undefined for a number) into a copy of `self`: self's gradient is zero at
/// the written positions, src's is gathered from them.
void record_scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Tensor& out);
/// scatter_add (`index_add` when `index_add`, with `alpha`): self's gradient passes through,
/// src's is gathered (index_select-ed) from the written positions.
void record_scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, bool index_add, double alpha,
                        const Tensor& out);
/// masked_scatter: self's gradient is zero where `mask` is true; source's first count(mask)
/// elements get the gradient of the positions they filled, the rest zero.
void record_masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source, const Tensor& out);
/// index_put (out of place) of `values` at `indices`: self's gradient passes through, zeroed at
/// the written positions unless `accumulate`; values' is gathered from them, summed to its shape.
void record_index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate, const Tensor& out);

}  // namespace locus::autograd
