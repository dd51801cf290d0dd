#pragma once
// The one op path of the elementwise ops (Note [Op path] in elementwise_call.cpp).

#include <optional>

#include "locus/scalar.h"
#include "locus/tensor.h"
#include "src/ops/kernel_table.h"
#include "src/ops/op_id.h"

namespace locus::ops {

/// `op(x)` for a unary op of the op table; `out` undefined makes a new tensor, defined is the
/// in-place or out= form. Clamp takes its bounds in `lo` and `hi`.
Tensor run_unary(OpId op, const Tensor& x, Tensor out = {}, const std::optional<Scalar>& lo = std::nullopt,
                 const std::optional<Scalar>& hi = std::nullopt);
/// `op(x)` for a unary op whose parameters (elu's alpha, softplus's beta, ...) are in `scalars`.
Tensor run_unary(OpId op, const Tensor& x, Tensor out, const ElementwiseScalars& scalars);
/// `op(a, b)` for a binary op of the op table (`alpha` scales b for add and sub).
Tensor run_binary(OpId op, const Tensor& a, const Tensor& b, Tensor out = {}, const Scalar& alpha = 1);
/// `op(a, b)` with a number for b: it joins the dtype rule as a Python number does.
Tensor run_binary(OpId op, const Tensor& a, const Scalar& b, Tensor out = {}, const Scalar& alpha = 1);
/// `op(a, b)` with a number for a (`2.5 - t`, `1 / t`).
Tensor run_binary(OpId op, const Scalar& a, const Tensor& b);
/// where(condition, a, b).
Tensor run_where(const Tensor& condition, const Tensor& a, const Tensor& b);

}  // namespace locus::ops
