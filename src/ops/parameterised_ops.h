#pragma once
// The scalars of the elementwise ops that take parameters (nan_to_num, the activations), built
// once for the out-of-place functions and the in-place forms alike. Each checks its arguments as
// PyTorch does before anything runs.

#include <optional>

#include "locus/scalar.h"
#include "locus/tensor.h"
#include "src/ops/kernel_table.h"

namespace locus::ops {

/// nan_to_num's replacements in `dtype`: absent infinities become its largest (lowest) finite
/// value; integer and bool dtypes keep the defaults (they have neither NaN nor infinities).
ElementwiseScalars nan_to_num_scalars(DType dtype, std::optional<double> nan, std::optional<double> posinf,
                                      std::optional<double> neginf);
/// hardtanh's bounds for `x`: DTypeError for a bool tensor, ValueError for an unsigned one with
/// a negative bound (PyTorch's two refusals); for an integer tensor the bounds are integers, so
/// that they leave its dtype as it is.
ElementwiseScalars hardtanh_scalars(const Tensor& x, const Scalar& min_val, const Scalar& max_val);
/// elu's alpha and output scale (selu: PyTorch's two constants).
ElementwiseScalars elu_scalars(const Scalar& alpha, const Scalar& scale);

}  // namespace locus::ops
