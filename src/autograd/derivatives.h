#pragma once
// The backward formulas, recorded by the op front ends when autograd::needs_grad() says so.

#include <optional>
#include <vector>

#include "locus/scalar.h"
#include "locus/tensor.h"
#include "src/ops/op_id.h"

namespace locus::autograd {

void record_binary(ops::OpId op, const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out);
/// a op b for a scalar b (alpha does not reach a's gradient: it only scales b).
void record_binary_scalar(ops::OpId op, const Tensor& a, const Scalar& b, const Tensor& out);
void record_unary(ops::OpId op, const Tensor& x, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi,
                  const Tensor& out);
void record_where(const Tensor& condition, const Tensor& a, const Tensor& b, const Tensor& out);
/// Sum or mean of `x` over the dims marked in `reduced`.
void record_sum(const Tensor& x, const std::vector<bool>& reduced, bool keepdim, bool mean, const Tensor& out);
void record_softmax(bool log, int64_t dim, const Tensor& x, const Tensor& out);
/// Batched product of a [..., m, k] and b [..., k, n] (batch dims broadcast).
void record_matmul(const Tensor& a, const Tensor& b, const Tensor& out);
/// A move to another device or dtype: the gradient goes back to where x lived, as x's dtype.
void record_to(const Tensor& x, const Tensor& out);
void record_cat(const std::vector<Tensor>& inputs, int64_t dim, const Tensor& out);
/// A view or copy whose gradient is `grad_of_input(grad)`.
void record_view(const char* name, const Tensor& x, const Tensor& out, std::function<Tensor(const Tensor&)> grad_of_input);

}  // namespace locus::autograd
