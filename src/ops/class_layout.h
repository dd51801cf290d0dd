#pragma once
// The layout the class losses work in: an input [C] or [N, C, d1, ...] as rows [M, C] with the
// class dim last, the class-index target's shape, and the way back for a gradient.

#include "locus/shape.h"
#include "locus/tensor.h"

namespace locus::ops {

/// The shape class indices have for an input [C] (0-dim) or [N, C, d1, ...] ([N, d1, ...]).
Shape class_target_shape(const Tensor& input);

/// `input` [C] or [N, C, d1, ...] as [N * d1 * ..., C] (a view where the layout allows).
Tensor class_rows(const Tensor& input);

/// A [M, C] gradient of class_rows(x) back in the shape `input_shape` of x, contiguous.
Tensor from_class_rows(const Tensor& rows, const Shape& input_shape);

}  // namespace locus::ops
