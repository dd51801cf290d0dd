#pragma once
// The 2-d convolution as an op: a backend's fused kernel (KernelTable::convolution: oneDNN on the
// CPU) where it takes the call, else the general path of im2col and matrix products (Note
// [General convolution path] in src/nn/conv.cpp). The callers (F::conv1d/conv2d) check the
// user's arguments first.

#include <cstdint>

#include "locus/tensor.h"
#include "src/ops/im2col.h"

namespace locus::ops {

/// conv(input, weight) + bias over input [N, C_in, H, W], weight [C_out, C_in / groups, kH, kW],
/// bias [C_out] or undefined, with the windows of `g` (symmetric padding; out_h x out_w windows).
/// Differentiable in all three.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const WindowGeometry& g, int64_t groups);

/// The transposed convolution's general path, which is also conv2d's input gradient: per group,
/// the filters' transpose times x [N, C, H, W] (weight [C, C_out / groups, kH, kW]: dim 0 runs
/// over x's channels), then col2im into [N, C_out, out_h, out_w]. `g` describes the windows of
/// the convolution this one transposes, its out_h x out_w being x's H x W. Differentiable.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const WindowGeometry& g, int64_t groups, int64_t out_h,
                        int64_t out_w);

}  // namespace locus::ops
