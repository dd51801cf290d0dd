#pragma once
/// \file pooling.h
/// The pooling functions of torch.nn.functional: F::max_pool1d/2d (with indices), F::avg_pool1d/2d,
/// F::adaptive_avg_pool2d, F::adaptive_max_pool2d.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>
#include <tuple>

#include "locus/arg.h"
#include "locus/expanding_array.h"
#include "locus/tensor.h"

namespace locus::nn::functional {

/// The window options max and average pooling share, for the `D`-dim options `Derived` of one
/// of them (the setters return `Derived&`, LOCUS_DERIVED_ARG, so a chain goes on with Derived's
/// own fields).
template <size_t D, class Derived>
struct PoolFuncOptionsBase {
  /// The window size; the stride defaults to it.
  PoolFuncOptionsBase(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}
  /// The window size per dim.
  LOCUS_DERIVED_ARG(ExpandingArray<D>, kernel_size);
  /// The step between windows (default: the kernel size).
  LOCUS_DERIVED_ARG(ExpandingArray<D>, stride);
  /// Implicit padding on both sides (-inf for max pooling, zeros for average pooling), at most
  /// half the kernel size.
  LOCUS_DERIVED_ARG(ExpandingArray<D>, padding) = 0;
  /// Round the output size up (a last window that starts inside the input or the left padding).
  LOCUS_DERIVED_ARG(bool, ceil_mode) = false;
};

/// Options of F::max_pool1d/2d: `F::MaxPool2dFuncOptions(2)`, `F::MaxPool2dFuncOptions({3, 3}).stride(2).padding(1)`.
template <size_t D>
struct MaxPoolFuncOptions : PoolFuncOptionsBase<D, MaxPoolFuncOptions<D>> {
  using PoolFuncOptionsBase<D, MaxPoolFuncOptions<D>>::PoolFuncOptionsBase;
  /// The spacing between window elements.
  LOCUS_ARG(ExpandingArray<D>, dilation) = 1;
};
/// F::max_pool1d's options.
using MaxPool1dFuncOptions = MaxPoolFuncOptions<1>;
/// F::max_pool2d's options.
using MaxPool2dFuncOptions = MaxPoolFuncOptions<2>;

/// As F.max_pool2d: the maximum of each window of input [N, C, H, W] or [C, H, W]; NaN wins.
/// Output size floor((H + 2 padding - dilation (k - 1) - 1) / stride) + 1 (ceil with ceil_mode,
/// less a last window that would start in the right padding). ValueError for a padding larger
/// than half the kernel, non-positive sizes, strides or dilations; ShapeError for another rank or
/// an output size below 1. The gradient goes to each window's maximum (its first, on ties).
Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options);
/// max_pool2d's values and, as int64, the flat position h W + w of each maximum within its
/// input plane (what F.max_pool2d(..., return_indices=True) gives and MaxUnpool takes).
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& options);
/// As F.max_pool1d over input [N, C, L] or [C, L] (max_pool2d's rules).
Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& options);
/// max_pool1d's values and the position of each maximum within its row.
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& options);

/// Options of F::avg_pool1d/2d: `F::AvgPool2dFuncOptions(2).count_include_pad(false)`.
template <size_t D>
struct AvgPoolFuncOptions : PoolFuncOptionsBase<D, AvgPoolFuncOptions<D>> {
  using PoolFuncOptionsBase<D, AvgPoolFuncOptions<D>>::PoolFuncOptionsBase;
  /// Count the padding's zeros in the divisor (PyTorch's default); false: only input elements.
  LOCUS_ARG(bool, count_include_pad) = true;
  /// Divide every window's sum by this instead (2-d only, as PyTorch).
  LOCUS_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};
/// F::avg_pool1d's options.
using AvgPool1dFuncOptions = AvgPoolFuncOptions<1>;
/// F::avg_pool2d's options.
using AvgPool2dFuncOptions = AvgPoolFuncOptions<2>;

/// As F.avg_pool2d: the mean of each window of input [N, C, H, W] or [C, H, W]. The divisor is
/// the window's size clipped to the padded input (count_include_pad), the number of input
/// elements in it (without), or divisor_override. Errors as max_pool2d's, and a ValueError for
/// divisor_override 0. Differentiable.
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& options);
/// As F.avg_pool1d over input [N, C, L] or [C, L].
Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& options);

/// Options of F::adaptive_avg_pool2d / adaptive_max_pool2d: `F::AdaptiveAvgPool2dFuncOptions({7, 7})`.
struct AdaptivePool2dFuncOptions {
  /// The output's spatial size (one number: square).
  AdaptivePool2dFuncOptions(ExpandingArray<2> output_size) : output_size_(output_size) {}
  /// The output's spatial size.
  LOCUS_ARG(ExpandingArray<2>, output_size);
};
/// F::adaptive_avg_pool2d's options.
using AdaptiveAvgPool2dFuncOptions = AdaptivePool2dFuncOptions;
/// F::adaptive_max_pool2d's options.
using AdaptiveMaxPool2dFuncOptions = AdaptivePool2dFuncOptions;

/// As F.adaptive_avg_pool2d: output cell (i, j) is the mean of input rows
/// [floor(i H / oh), ceil((i + 1) H / oh)) and the same columns, for input [N, C, H, W] or
/// [C, H, W] (an output size of 0 gives an empty result). ValueError for a negative output
/// size; ShapeError for another rank or an empty plane. Differentiable.
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options);
/// As F.adaptive_max_pool2d: the maximum over adaptive_avg_pool2d's windows.
Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options);
/// adaptive_max_pool2d's values and the flat position h W + w of each maximum in its plane.
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& options);

}  // namespace locus::nn::functional

LOCUS_API_END
