#pragma once
/// \file conv.h
/// The convolution layers: nn::Conv1d, nn::Conv2d, nn::ConvTranspose2d, with LibTorch's options
/// (`nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1))`) and PyTorch's state_dict names
/// (`weight`, `bias`) and initialisation. Each is written once over its number of spatial dims
/// (ConvNdImpl, ConvTransposeNdImpl, on ConvLayerBase), as LibTorch's.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <string>
#include <vector>

#include "locus/arg.h"
#include "locus/expanding_array.h"
#include "locus/nn/cloneable.h"
#include "locus/nn/functional/conv.h"
#include "locus/nn/functional/padding.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"

namespace locus::nn {

/// What the options of every convolution layer share, for the options `Derived` of one kind
/// (ConvOptions, ConvTransposeOptions), which add their padding: the channels, the kernel and
/// how it moves, the groups, the bias and the padding mode.
template <size_t D, class Derived>
struct ConvOptionsBase {
  /// The channel counts and the kernel size (one number: the same in every dim).
  ConvOptionsBase(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  /// Channels of the input.
  LOCUS_DERIVED_ARG(int64_t, in_channels);
  /// Channels of the output (filters).
  LOCUS_DERIVED_ARG(int64_t, out_channels);
  /// The kernel size per dim.
  LOCUS_DERIVED_ARG(ExpandingArray<D>, kernel_size);
  /// The step between windows (of the convolution a transposed one transposes).
  LOCUS_DERIVED_ARG(ExpandingArray<D>, stride) = 1;
  /// The spacing between kernel elements.
  LOCUS_DERIVED_ARG(ExpandingArray<D>, dilation) = 1;
  /// Channel groups (in_channels and out_channels must be multiples).
  LOCUS_DERIVED_ARG(int64_t, groups) = 1;
  /// Whether the layer has a bias.
  LOCUS_DERIVED_ARG(bool, bias) = true;
  /// How the padding is filled: kZeros (the default), kReflect, kReplicate or kCircular; the
  /// transposed layers take only kZeros, as PyTorch's.
  LOCUS_DERIVED_ARG(functional::PadMode, padding_mode) = kZeros;
};

/// Options of nn::Conv1d / nn::Conv2d: `Conv2dOptions(in_channels, out_channels, kernel_size)`.
template <size_t D>
struct ConvOptions : ConvOptionsBase<D, ConvOptions<D>> {
  using ConvOptionsBase<D, ConvOptions<D>>::ConvOptionsBase;
  /// Padding on both sides of each dim, or kSame / kValid.
  LOCUS_ARG(ConvPadding<D>, padding) = 0;
};
/// nn::Conv1d's options.
using Conv1dOptions = ConvOptions<1>;
/// nn::Conv2d's options.
using Conv2dOptions = ConvOptions<2>;

/// Options of nn::ConvTranspose2d: `ConvTranspose2dOptions(in_channels, out_channels, kernel_size)`.
template <size_t D>
struct ConvTransposeOptions : ConvOptionsBase<D, ConvTransposeOptions<D>> {
  using ConvOptionsBase<D, ConvTransposeOptions<D>>::ConvOptionsBase;
  /// The padding of the convolution this one transposes.
  LOCUS_ARG(ExpandingArray<D>, padding) = 0;
  /// Extra size on one side of each dim.
  LOCUS_ARG(ExpandingArray<D>, output_padding) = 0;
};
/// nn::ConvTranspose2d's options.
using ConvTranspose2dOptions = ConvTransposeOptions<2>;

/// What every convolution layer shares, for the layer class `Derived` of D spatial dims with
/// `Options` (ConvOptions<D> or ConvTransposeOptions<D>): the options, checked at construction
/// as PyTorch's _ConvNd (ValueError for non-positive sizes or channels not divisible by groups),
/// the weight and the bias, PyTorch's initialisation (kaiming_uniform with a = sqrt(5)) and its
/// repr. The weight is [C_out, C_in / groups, k...], transposed [C_in, C_out / groups, k...];
/// the bias is [C_out].
template <size_t D, class Derived, class Options>
class ConvLayerBase : public Cloneable<Derived> {
 public:
  /// A layer `options` describes.
  explicit ConvLayerBase(const Options& options);
  /// `nn::Conv2d(in, out, kernel_size)`.
  ConvLayerBase(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : ConvLayerBase(Options(in_channels, out_channels, kernel_size)) {}
  /// Registers weight and bias, uninitialised.
  void reset() override;
  /// Draws weight and bias as PyTorch does.
  void reset_parameters();
  /// PyTorch's "1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)".
  std::string extra_repr() const override;
  /// The options the layer was built with.
  Options options;
  /// The filters and the bias (undefined without bias).
  Tensor weight, bias;
};

/// A convolution over D spatial dims, [N, C_in, ...] or unbatched [C_in, ...]: the base of
/// nn::Conv1dImpl and nn::Conv2dImpl.
template <size_t D, class Derived>
class ConvNdImpl : public ConvLayerBase<D, Derived, ConvOptions<D>> {
 public:
  using ConvLayerBase<D, Derived, ConvOptions<D>>::ConvLayerBase;
  /// F::conv1d / F::conv2d of the input (padded as padding_mode says first, when it is not
  /// kZeros).
  Tensor forward(const Tensor& input) override;
};

/// A transposed convolution ("deconvolution") over D spatial dims: the base of
/// nn::ConvTranspose2dImpl.
template <size_t D, class Derived>
class ConvTransposeNdImpl : public ConvLayerBase<D, Derived, ConvTransposeOptions<D>> {
 public:
  using ConvLayerBase<D, Derived, ConvTransposeOptions<D>>::ConvLayerBase;
  /// F::conv_transpose2d with the options' output_padding.
  Tensor forward(const Tensor& input) override;
  /// The output of spatial size `output_size` ([H, W], or with the batch and channel dims in
  /// front): the output_padding that gives it is computed, as PyTorch's forward(input,
  /// output_size). ValueError when no output_padding below the stride gives that size.
  Tensor forward(const Tensor& input, const std::vector<int64_t>& output_size);
};

/// A 1-d convolution over [N, C_in, L] or [C_in, L]: weight [C_out, C_in / groups, k], bias
/// [C_out], drawn as PyTorch's reset_parameters (kaiming_uniform with a = sqrt(5)).
/// ValueError at construction for non-positive sizes or channels not divisible by groups.
class Conv1dImpl : public ConvNdImpl<1, Conv1dImpl> {
 public:
  using ConvNdImpl<1, Conv1dImpl>::ConvNdImpl;
};
LOCUS_MODULE(Conv1d);

/// A 2-d convolution over [N, C_in, H, W] or [C_in, H, W]: weight [C_out, C_in / groups, kH, kW],
/// bias [C_out], initialised as PyTorch's.
class Conv2dImpl : public ConvNdImpl<2, Conv2dImpl> {
 public:
  using ConvNdImpl<2, Conv2dImpl>::ConvNdImpl;
};
LOCUS_MODULE(Conv2d);

/// The transposed 2-d convolution ("deconvolution"): weight [C_in, C_out / groups, kH, kW],
/// bias [C_out], initialised as PyTorch's.
class ConvTranspose2dImpl : public ConvTransposeNdImpl<2, ConvTranspose2dImpl> {
 public:
  using ConvTransposeNdImpl<2, ConvTranspose2dImpl>::ConvTransposeNdImpl;
};
LOCUS_MODULE(ConvTranspose2d);

// Their members are compiled once, in src/nn/conv_modules.cpp.
extern template class ConvLayerBase<1, Conv1dImpl, ConvOptions<1>>;
extern template class ConvLayerBase<2, Conv2dImpl, ConvOptions<2>>;
extern template class ConvLayerBase<2, ConvTranspose2dImpl, ConvTransposeOptions<2>>;
extern template class ConvNdImpl<1, Conv1dImpl>;
extern template class ConvNdImpl<2, Conv2dImpl>;
extern template class ConvTransposeNdImpl<2, ConvTranspose2dImpl>;

}  // namespace locus::nn

LOCUS_API_END
