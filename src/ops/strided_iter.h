#pragma once
// Building the StridedIter description from tensors, and broadcasting.

#include <initializer_list>

#include "locus/tensor.h"
#include "src/ops/kernel_table.h"

namespace locus::ops {

/// The broadcast of two shapes (numpy rules). ShapeError naming `op` when they don't match.
Shape broadcast_shapes(const Shape& a, const Shape& b, OpId op);

/// Describes iterating over `out`'s shape with `inputs` broadcast to it. Size-1 dims are
/// dropped and dims contiguous for every operand are merged.
StridedIter make_iter(const Tensor& out, std::initializer_list<const Tensor*> inputs);

}  // namespace locus::ops
