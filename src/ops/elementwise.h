#pragma once
// The generic elementwise front ends, shared by the free functions and the Tensor methods.

#include <optional>

#include "locus/tensor.h"
#include "src/ops/op_id.h"

namespace locus::ops {

/// `op(a, b)` into a new tensor, or into `out` when it is defined (in-place and _out forms).
Tensor binary(OpId op, const Tensor& a, const Tensor& b, const Scalar& alpha, Tensor out);
Tensor binary_scalar(OpId op, const Tensor& a, const Scalar& b, const Scalar& alpha, Tensor out);
/// `op(x)`; Clamp takes the optional bounds.
Tensor unary(OpId op, const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi, Tensor out);

}  // namespace locus::ops
