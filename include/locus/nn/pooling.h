#pragma once
/// \file pooling.h
/// The pooling layers: nn::MaxPool1d/2d, nn::AvgPool1d/2d, nn::AdaptiveAvgPool2d,
/// nn::AdaptiveMaxPool2d, with LibTorch's options (`nn::MaxPool2d(nn::MaxPool2dOptions(2))`,
/// or `nn::MaxPool2d(2)`). They hold no parameters.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <string>
#include <tuple>

#include "locus/nn/cloneable.h"
#include "locus/nn/functional/pooling.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"

namespace locus::nn {

/// nn::MaxPool1d's options (F::max_pool1d's).
using MaxPool1dOptions = functional::MaxPool1dFuncOptions;
/// nn::MaxPool2d's options (F::max_pool2d's).
using MaxPool2dOptions = functional::MaxPool2dFuncOptions;
/// nn::AvgPool1d's options.
using AvgPool1dOptions = functional::AvgPool1dFuncOptions;
/// nn::AvgPool2d's options.
using AvgPool2dOptions = functional::AvgPool2dFuncOptions;
/// nn::AdaptiveAvgPool2d's options.
using AdaptiveAvgPool2dOptions = functional::AdaptiveAvgPool2dFuncOptions;
/// nn::AdaptiveMaxPool2d's options.
using AdaptiveMaxPool2dOptions = functional::AdaptiveMaxPool2dFuncOptions;

/// F::max_pool1d as a layer.
class MaxPool1dImpl : public Cloneable<MaxPool1dImpl> {
 public:
  /// A layer with `options` (a kernel size alone converts).
  explicit MaxPool1dImpl(const MaxPool1dOptions& options_) : options(options_) {}
  /// `nn::MaxPool1d(2)`: the options' one required argument.
  explicit MaxPool1dImpl(ExpandingArray<1> kernel_size) : options(kernel_size) {}
  void reset() override {}
  /// The maxima of the windows.
  Tensor forward(const Tensor& input) override;
  /// The maxima and their positions, as PyTorch's return_indices=True.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  /// PyTorch's "kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False".
  std::string extra_repr() const override;
  /// The options the layer was built with.
  MaxPool1dOptions options;
};
LOCUS_MODULE(MaxPool1d);

/// F::max_pool2d as a layer.
class MaxPool2dImpl : public Cloneable<MaxPool2dImpl> {
 public:
  /// A layer with `options` (a kernel size alone converts).
  explicit MaxPool2dImpl(const MaxPool2dOptions& options_) : options(options_) {}
  /// `nn::MaxPool2d(2)`: the options' one required argument.
  explicit MaxPool2dImpl(ExpandingArray<2> kernel_size) : options(kernel_size) {}
  void reset() override {}
  /// The maxima of the windows.
  Tensor forward(const Tensor& input) override;
  /// The maxima and their positions, as PyTorch's return_indices=True.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  /// PyTorch's "kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False".
  std::string extra_repr() const override;
  /// The options the layer was built with.
  MaxPool2dOptions options;
};
LOCUS_MODULE(MaxPool2d);

/// F::avg_pool1d as a layer.
class AvgPool1dImpl : public Cloneable<AvgPool1dImpl> {
 public:
  /// A layer with `options`.
  explicit AvgPool1dImpl(const AvgPool1dOptions& options_) : options(options_) {}
  /// `nn::AvgPool1d(2)`: the options' one required argument.
  explicit AvgPool1dImpl(ExpandingArray<1> kernel_size) : options(kernel_size) {}
  void reset() override {}
  /// The means of the windows.
  Tensor forward(const Tensor& input) override;
  /// PyTorch's "kernel_size=(2,), stride=(2,), padding=(0,)".
  std::string extra_repr() const override;
  /// The options the layer was built with.
  AvgPool1dOptions options;
};
LOCUS_MODULE(AvgPool1d);

/// F::avg_pool2d as a layer.
class AvgPool2dImpl : public Cloneable<AvgPool2dImpl> {
 public:
  /// A layer with `options`.
  explicit AvgPool2dImpl(const AvgPool2dOptions& options_) : options(options_) {}
  /// `nn::AvgPool2d(2)`: the options' one required argument.
  explicit AvgPool2dImpl(ExpandingArray<2> kernel_size) : options(kernel_size) {}
  void reset() override {}
  /// The means of the windows.
  Tensor forward(const Tensor& input) override;
  /// PyTorch's "kernel_size=2, stride=2, padding=0".
  std::string extra_repr() const override;
  /// The options the layer was built with.
  AvgPool2dOptions options;
};
LOCUS_MODULE(AvgPool2d);

/// F::adaptive_avg_pool2d as a layer: `nn::AdaptiveAvgPool2d(1)` (global average pooling).
class AdaptiveAvgPool2dImpl : public Cloneable<AdaptiveAvgPool2dImpl> {
 public:
  /// A layer with `options`.
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options_) : options(options_) {}
  /// `nn::AdaptiveAvgPool2d(2)`: the options' one required argument.
  explicit AdaptiveAvgPool2dImpl(ExpandingArray<2> output_size) : options(output_size) {}
  void reset() override {}
  /// The means over the adaptive windows.
  Tensor forward(const Tensor& input) override;
  /// PyTorch's "output_size=(7, 7)".
  std::string extra_repr() const override;
  /// The options the layer was built with.
  AdaptiveAvgPool2dOptions options;
};
LOCUS_MODULE(AdaptiveAvgPool2d);

/// F::adaptive_max_pool2d as a layer.
class AdaptiveMaxPool2dImpl : public Cloneable<AdaptiveMaxPool2dImpl> {
 public:
  /// A layer with `options`.
  explicit AdaptiveMaxPool2dImpl(const AdaptiveMaxPool2dOptions& options_) : options(options_) {}
  /// `nn::AdaptiveMaxPool2d(2)`: the options' one required argument.
  explicit AdaptiveMaxPool2dImpl(ExpandingArray<2> output_size) : options(output_size) {}
  void reset() override {}
  /// The maxima over the adaptive windows.
  Tensor forward(const Tensor& input) override;
  /// The maxima and their positions.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  /// PyTorch's "output_size=(7, 7)".
  std::string extra_repr() const override;
  /// The options the layer was built with.
  AdaptiveMaxPool2dOptions options;
};
LOCUS_MODULE(AdaptiveMaxPool2d);

}  // namespace locus::nn

LOCUS_API_END
