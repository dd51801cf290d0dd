#pragma once
// PyTorch's result_type over any number of tensors and numbers.

#include "locus/scalar.h"
#include "locus/tensor.h"

namespace locus::ops {

/// The dtype `tensors` and `numbers` promote to: dimensioned tensors outrank 0-dim tensors,
/// which outrank numbers, unless a lower tier brings a higher category (bool < integer <
/// floating). `count` tensors, at least one; `nnumbers` numbers.
DType promote_operands(const Tensor* const* tensors, int count, const Scalar* numbers, int nnumbers);

}  // namespace locus::ops
