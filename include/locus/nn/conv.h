#pragma once
/// \file conv.h
/// The convolution layers: nn::Conv1d, nn::Conv2d, nn::ConvTranspose2d, with LibTorch's options
/// (`nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1))`) and PyTorch's state_dict names
/// (`weight`, `bias`) and initialisation.

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

/// Options of nn::Conv1d / nn::Conv2d: `Conv2dOptions(in_channels, out_channels, kernel_size)`.
template <size_t D>
struct ConvOptions {
  /// The channel counts and the kernel size (one number: the same in every dim).
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  /// Channels of the input.
  LOCUS_ARG(int64_t, in_channels);
  /// Channels of the output (filters).
  LOCUS_ARG(int64_t, out_channels);
  /// The kernel size per dim.
  LOCUS_ARG(ExpandingArray<D>, kernel_size);
  /// The step between windows.
  LOCUS_ARG(ExpandingArray<D>, stride) = 1;
  /// Padding on both sides of each dim, or kSame / kValid.
  LOCUS_ARG(ConvPadding<D>, padding) = 0;
  /// The spacing between kernel elements.
  LOCUS_ARG(ExpandingArray<D>, dilation) = 1;
  /// Channel groups (in_channels and out_channels must be multiples).
  LOCUS_ARG(int64_t, groups) = 1;
  /// Whether the layer has a bias.
  LOCUS_ARG(bool, bias) = true;
  /// How the padding is filled: kZeros (the default), kReflect, kReplicate or kCircular.
  LOCUS_ARG(functional::PadMode, padding_mode) = kZeros;
};
/// nn::Conv1d's options.
using Conv1dOptions = ConvOptions<1>;
/// nn::Conv2d's options.
using Conv2dOptions = ConvOptions<2>;

/// A 1-d convolution over [N, C_in, L] or [C_in, L]: weight [C_out, C_in / groups, k], bias
/// [C_out], drawn as PyTorch's reset_parameters (kaiming_uniform with a = sqrt(5)).
/// ValueError at construction for non-positive sizes or channels not divisible by groups.
class Conv1dImpl : public Cloneable<Conv1dImpl> {
 public:
  /// A layer `options` describes.
  explicit Conv1dImpl(const Conv1dOptions& options);
  /// `nn::Conv1d(in, out, kernel_size)`.
  Conv1dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : Conv1dImpl(Conv1dOptions(in_channels, out_channels, kernel_size)) {}
  /// F::conv1d of the input (padded as padding_mode says first, when it is not kZeros).
  Tensor forward(const Tensor& input) override;
  /// Registers weight and bias, uninitialised.
  void reset() override;
  /// Draws weight and bias as PyTorch does.
  void reset_parameters();
  /// PyTorch's "1, 8, kernel_size=(3,), stride=(1,)".
  std::string extra_repr() const override;
  /// The options the layer was built with.
  Conv1dOptions options;
  /// The filters and the bias (undefined without bias).
  Tensor weight, bias;
};
LOCUS_MODULE(Conv1d);

/// A 2-d convolution over [N, C_in, H, W] or [C_in, H, W]: weight [C_out, C_in / groups, kH, kW],
/// bias [C_out], initialised as PyTorch's.
class Conv2dImpl : public Cloneable<Conv2dImpl> {
 public:
  /// A layer `options` describes.
  explicit Conv2dImpl(const Conv2dOptions& options);
  /// `nn::Conv2d(in, out, kernel_size)`.
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  /// F::conv2d of the input (padded as padding_mode says first, when it is not kZeros).
  Tensor forward(const Tensor& input) override;
  /// Registers weight and bias, uninitialised.
  void reset() override;
  /// Draws weight and bias as PyTorch does.
  void reset_parameters();
  /// PyTorch's "1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)".
  std::string extra_repr() const override;
  /// The options the layer was built with.
  Conv2dOptions options;
  /// The filters and the bias (undefined without bias).
  Tensor weight, bias;
};
LOCUS_MODULE(Conv2d);

/// Options of nn::ConvTranspose2d: `ConvTranspose2dOptions(in_channels, out_channels, kernel_size)`.
template <size_t D>
struct ConvTransposeOptions {
  /// The channel counts and the kernel size.
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  /// Channels of the input.
  LOCUS_ARG(int64_t, in_channels);
  /// Channels of the output.
  LOCUS_ARG(int64_t, out_channels);
  /// The kernel size per dim.
  LOCUS_ARG(ExpandingArray<D>, kernel_size);
  /// The stride of the convolution this one transposes.
  LOCUS_ARG(ExpandingArray<D>, stride) = 1;
  /// That convolution's padding.
  LOCUS_ARG(ExpandingArray<D>, padding) = 0;
  /// Extra size on one side of each dim.
  LOCUS_ARG(ExpandingArray<D>, output_padding) = 0;
  /// Channel groups.
  LOCUS_ARG(int64_t, groups) = 1;
  /// Whether the layer has a bias.
  LOCUS_ARG(bool, bias) = true;
  /// The spacing between kernel elements.
  LOCUS_ARG(ExpandingArray<D>, dilation) = 1;
  /// Only kZeros, as PyTorch.
  LOCUS_ARG(functional::PadMode, padding_mode) = kZeros;
};
/// nn::ConvTranspose2d's options.
using ConvTranspose2dOptions = ConvTransposeOptions<2>;

/// The transposed 2-d convolution ("deconvolution"): weight [C_in, C_out / groups, kH, kW],
/// bias [C_out], initialised as PyTorch's.
class ConvTranspose2dImpl : public Cloneable<ConvTranspose2dImpl> {
 public:
  /// A layer `options` describes.
  explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& options);
  /// `nn::ConvTranspose2d(in, out, kernel_size)`.
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in_channels, out_channels, kernel_size)) {}
  /// F::conv_transpose2d with the options' output_padding.
  Tensor forward(const Tensor& input) override;
  /// The output of spatial size `output_size` ([H, W], or with the batch and channel dims in
  /// front): the output_padding that gives it is computed, as PyTorch's forward(input,
  /// output_size). ValueError when no output_padding below the stride gives that size.
  Tensor forward(const Tensor& input, const std::vector<int64_t>& output_size);
  /// Registers weight and bias, uninitialised.
  void reset() override;
  /// Draws weight and bias as PyTorch does.
  void reset_parameters();
  /// PyTorch's "16, 8, kernel_size=(3, 3), stride=(2, 2)".
  std::string extra_repr() const override;
  /// The options the layer was built with.
  ConvTranspose2dOptions options;
  /// The filters and the bias (undefined without bias).
  Tensor weight, bias;
};
LOCUS_MODULE(ConvTranspose2d);

}  // namespace locus::nn

LOCUS_API_END
