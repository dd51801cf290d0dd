#pragma once
// im2col and col2im as ops (OpFamily::Im2col): the general path of the convolutions and the
// window gathering of pooling, on every device that has the kernel (Im2colArgs).

#include <cstdint>
#include <tuple>

#include "locus/tensor.h"

namespace locus::ops {

/// Sliding windows over the last two dims: the window size, padding, stride and dilation per
/// dim, and how many windows fit (out_h by out_w; the caller computes them, so ceil-mode pooling
/// can ask for windows that reach past the padding).
struct WindowGeometry {
  int64_t kernel_h = 1, kernel_w = 1, pad_h = 0, pad_w = 0;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t out_h = 0, out_w = 0;
};

/// Columns [N, C kH kW, out_h out_w] of a floating image [N, C, H, W] (any strides); window
/// elements outside the image read `fill`. Differentiable (backward: col2im).
Tensor im2col(const Tensor& image, const WindowGeometry& g, double fill = 0);

/// The image [N, C, height, width] whose elements are the sums of the entries of columns
/// [N, C kH kW, out_h out_w] that read them. Differentiable (backward: im2col).
Tensor col2im(const Tensor& columns, int64_t height, int64_t width, const WindowGeometry& g);

/// Max pooling of a floating image [N, C, H, W] over the windows of `g` (padding excluded): the
/// maxima [N, C, out_h, out_w] and their int64 flat positions h W + w in the plane. One pass;
/// differentiable in `image` (the gradient, a gather, goes to each window's maximum). Without
/// `return_indices` the positions are found only when the gradient needs them, and the second
/// result is undefined otherwise (an inference pass then writes a third of the bytes).
std::tuple<Tensor, Tensor> max_pool2d(const Tensor& image, const WindowGeometry& g, bool return_indices = true);

}  // namespace locus::ops
