#pragma once
// Whether a number fits a dtype, for the ops that store a number as it is (fill_, full).

#include "locus/dtype.h"
#include "locus/scalar.h"
#include "src/ops/op_id.h"

namespace locus::ops {

/// ValueError naming `op` when `dtype` cannot hold `value` (PyTorch's checked conversion:
/// 1e6 in float16, 300 in uint8, NaN in int64). As in PyTorch, unsigned dtypes take negative
/// integers down to -max (they wrap: -1 is 255 in uint8), floating dtypes take inf and NaN,
/// bool takes anything, and a fractional value for an integer dtype truncates.
void check_fits(const Scalar& value, DType dtype, OpId op);

}  // namespace locus::ops
