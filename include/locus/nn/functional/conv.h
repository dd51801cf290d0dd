#pragma once
/// \file conv.h
/// The convolutions of torch.nn.functional and the im2col pair they are built on: F::conv1d,
/// F::conv2d, F::conv_transpose2d, F::unfold, F::fold (`namespace F = locus::nn::functional;`).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <initializer_list>
#include <variant>
#include <vector>

#include "locus/arg.h"
#include "locus/expanding_array.h"
#include "locus/tensor.h"

namespace locus {

namespace nn {
/// `padding(kSame)`: the output has the input's size (stride 1 only), as padding='same'.
struct SamePadding {};
/// `padding(kValid)`: no padding, as padding='valid'.
struct ValidPadding {};
}  // namespace nn

/// LibTorch's padding constants: `Conv2dOptions(3, 8, 3).padding(kSame)`.
inline constexpr nn::SamePadding kSame{};
/// No padding.
inline constexpr nn::ValidPadding kValid{};

namespace nn {

/// A convolution's padding: a number (every side), one number per spatial dim, kSame or kValid.
template <size_t D>
class ConvPadding {
 public:
  /// `value` on both sides of every dim.
  ConvPadding(int64_t value) : sizes_(value) {}
  /// One number per dim, on both of its sides.
  ConvPadding(std::initializer_list<int64_t> values) : sizes_(values) {}
  /// One number per dim, on both of its sides.
  ConvPadding(ExpandingArray<D> values) : sizes_(values) {}
  /// padding='same'.
  ConvPadding(SamePadding) : sizes_(0), same_(true) {}
  /// padding='valid' (0 everywhere).
  ConvPadding(ValidPadding) : sizes_(0), valid_(true) {}
  /// True for padding='same'.
  bool is_same() const noexcept { return same_; }
  /// True for padding='valid'.
  bool is_valid() const noexcept { return valid_; }
  /// The explicit sizes (0 for 'valid'; meaningless for 'same').
  const ExpandingArray<D>& sizes() const noexcept { return sizes_; }

 private:
  ExpandingArray<D> sizes_;
  bool same_ = false, valid_ = false;
};

namespace functional {

/// What the options of every convolution function share, for the options `Derived` of one
/// kind (ConvFuncOptions, ConvTransposeFuncOptions), which add their padding: the bias, the
/// stride, the dilation and the groups.
template <size_t D, class Derived>
struct ConvFuncOptionsBase {
  /// A [out_channels] bias added to every position; undefined: none.
  LOCUS_DERIVED_ARG(Tensor, bias);
  /// The step between windows, per dim (of the convolution a transposed one transposes).
  LOCUS_DERIVED_ARG(ExpandingArray<D>, stride) = 1;
  /// The spacing between kernel elements (a trous convolution).
  LOCUS_DERIVED_ARG(ExpandingArray<D>, dilation) = 1;
  /// Channels split into this many groups, each convolved with its own filters (groups ==
  /// in_channels: depthwise).
  LOCUS_DERIVED_ARG(int64_t, groups) = 1;
};

/// Options of F::conv1d / F::conv2d: `F::Conv2dFuncOptions().bias(b).stride(2).padding(1)`.
template <size_t D>
struct ConvFuncOptions : ConvFuncOptionsBase<D, ConvFuncOptions<D>> {
  /// Implicit zero padding on both sides of each dim, or kSame / kValid.
  LOCUS_ARG(ConvPadding<D>, padding) = 0;
};
/// F::conv1d's options.
using Conv1dFuncOptions = ConvFuncOptions<1>;
/// F::conv2d's options.
using Conv2dFuncOptions = ConvFuncOptions<2>;

/// As F.conv1d: input [N, C_in, L] or unbatched [C_in, L], weight [C_out, C_in / groups, k].
/// Errors as conv2d's.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& options = {});

/// As F.conv2d (cross-correlation, PyTorch 1.13's rules): input [N, C_in, H, W] or unbatched
/// [C_in, H, W], weight [C_out, C_in / groups, kH, kW], optional bias [C_out]; output size
/// floor((H + 2 padding - dilation (kH - 1) - 1) / stride) + 1 per dim. ShapeError for an input of
/// the wrong rank, channels that do not match the weight (naming both), a kernel larger than
/// the padded input, a bias of the wrong size; ValueError for non-positive strides, dilations
/// or groups, negative padding, channels not divisible by groups, kSame with a stride; DTypeError
/// for operands of different dtypes; DeviceMismatchError naming 'weight' or 'bias'.
/// The general path is im2col (F::unfold) and a matrix product per group. Differentiable.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options = {});

/// Options of F::conv_transpose2d: `F::ConvTranspose2dFuncOptions().stride(2).output_padding(1)`.
template <size_t D>
struct ConvTransposeFuncOptions : ConvFuncOptionsBase<D, ConvTransposeFuncOptions<D>> {
  /// That convolution's padding: dilation (k - 1) - padding zeros are added on each side here.
  LOCUS_ARG(ExpandingArray<D>, padding) = 0;
  /// Extra size on one side of each dim (smaller than the stride or the dilation), choosing
  /// among the input sizes a strided convolution maps to one output size.
  LOCUS_ARG(ExpandingArray<D>, output_padding) = 0;
};
/// F::conv_transpose2d's options.
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;

/// As F.conv_transpose2d: the gradient of conv2d with respect to its input, as an op. input
/// [N, C_in, H, W] or [C_in, H, W], weight [C_in, C_out / groups, kH, kW]; output size
/// (H - 1) stride - 2 padding + dilation (kH - 1) + output_padding + 1. Errors as conv2d's, and a
/// ValueError for output_padding not smaller than the stride or the dilation. Differentiable.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const ConvTranspose2dFuncOptions& options = {});

/// Options of F::unfold: `F::UnfoldFuncOptions({3, 3}).padding(1).stride(2)`.
struct UnfoldFuncOptions {
  /// The window size per dim.
  UnfoldFuncOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}
  /// The window size per dim.
  LOCUS_ARG(ExpandingArray<2>, kernel_size);
  /// The spacing between window elements.
  LOCUS_ARG(ExpandingArray<2>, dilation) = 1;
  /// Implicit zero padding on both sides.
  LOCUS_ARG(ExpandingArray<2>, padding) = 0;
  /// The step between windows.
  LOCUS_ARG(ExpandingArray<2>, stride) = 1;
};

/// As F.unfold (im2col): every sliding window of input [N, C, H, W] (or [C, H, W]) as a column:
/// [N, C kH kW, L] with L the number of windows, channel-major within a column. Floating dtypes.
/// ShapeError for another rank or a kernel larger than the padded input; ValueError for
/// non-positive sizes, strides, dilations or negative padding. Differentiable (its gradient is
/// F::fold, a gather: deterministic on every device).
Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options);

/// Options of F::fold: `F::FoldFuncOptions({4, 5}, {2, 2})`.
struct FoldFuncOptions {
  /// The spatial size of the image the columns are summed into, and the window size.
  FoldFuncOptions(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : output_size_(output_size), kernel_size_(kernel_size) {}
  /// The output's spatial size.
  LOCUS_ARG(ExpandingArray<2>, output_size);
  /// The window size per dim.
  LOCUS_ARG(ExpandingArray<2>, kernel_size);
  /// The spacing between window elements.
  LOCUS_ARG(ExpandingArray<2>, dilation) = 1;
  /// Implicit padding (cropped from the result).
  LOCUS_ARG(ExpandingArray<2>, padding) = 0;
  /// The step between windows.
  LOCUS_ARG(ExpandingArray<2>, stride) = 1;
};

/// As F.fold (col2im), unfold's adjoint: columns [N, C kH kW, L] (or [C kH kW, L]) summed into
/// [N, C, H, W] where each window came from; overlapping entries add up, in a fixed order on
/// every device. ShapeError when the column count is not a multiple of kH kW or L is not the
/// number of windows of output_size. Differentiable.
Tensor fold(const Tensor& input, const FoldFuncOptions& options);

}  // namespace functional
}  // namespace nn
}  // namespace locus

LOCUS_API_END
