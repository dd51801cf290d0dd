#pragma once
/// \file pooling.h
/// The pooling layers: nn::MaxPool1d/2d, nn::AvgPool1d/2d, nn::AdaptiveAvgPool2d,
/// nn::AdaptiveMaxPool2d, with LibTorch's options (`nn::MaxPool2d(nn::MaxPool2dOptions(2))`,
/// or `nn::MaxPool2d(2)`: a layer is built from anything its options are built from). They hold
/// no parameters.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <string>

#include "locus/nn/functional/pooling.h"
#include "locus/nn/module_holder.h"
#include "locus/nn/options_module.h"

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

// The layers are their functions with their options and how they print them (options_module.h).
namespace detail {
/// MaxPool1d's repr: PyTorch's "kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False".
std::string max_pool1d_repr(const MaxPool1dOptions& options);
/// MaxPool2d's repr, as MaxPool1d's.
std::string max_pool2d_repr(const MaxPool2dOptions& options);
/// AvgPool1d's repr: PyTorch's "kernel_size=(2,), stride=(2,), padding=(0,)".
std::string avg_pool1d_repr(const AvgPool1dOptions& options);
/// AvgPool2d's repr: PyTorch's "kernel_size=2, stride=2, padding=0".
std::string avg_pool2d_repr(const AvgPool2dOptions& options);
/// The adaptive pools' repr (their options are one type): PyTorch's "output_size=(7, 7)".
std::string adaptive_pool_repr(const functional::AdaptivePool2dFuncOptions& options);
}  // namespace detail

/// F::max_pool1d as a layer.
/// Its forward: the maxima of the windows.
class MaxPool1dImpl : public FunctionalModule<MaxPool1dImpl, MaxPool1dOptions, &functional::max_pool1d,
                                           &functional::max_pool1d_with_indices, &detail::max_pool1d_repr> {
 public:
  using FunctionalModule::FunctionalModule;
};
LOCUS_MODULE(MaxPool1d);

/// F::max_pool2d as a layer.
/// Its forward: the maxima of the windows.
class MaxPool2dImpl : public FunctionalModule<MaxPool2dImpl, MaxPool2dOptions, &functional::max_pool2d,
                                           &functional::max_pool2d_with_indices, &detail::max_pool2d_repr> {
 public:
  using FunctionalModule::FunctionalModule;
};
LOCUS_MODULE(MaxPool2d);

/// F::avg_pool1d as a layer.
/// Its forward: the means of the windows.
class AvgPool1dImpl : public FunctionalModule<AvgPool1dImpl, AvgPool1dOptions, &functional::avg_pool1d, nullptr, &detail::avg_pool1d_repr> {
 public:
  using FunctionalModule::FunctionalModule;
};
LOCUS_MODULE(AvgPool1d);

/// F::avg_pool2d as a layer.
/// Its forward: the means of the windows.
class AvgPool2dImpl : public FunctionalModule<AvgPool2dImpl, AvgPool2dOptions, &functional::avg_pool2d, nullptr, &detail::avg_pool2d_repr> {
 public:
  using FunctionalModule::FunctionalModule;
};
LOCUS_MODULE(AvgPool2d);

/// F::adaptive_avg_pool2d as a layer: `nn::AdaptiveAvgPool2d(1)` (global average pooling).
/// Its forward: the means over the adaptive windows.
class AdaptiveAvgPool2dImpl : public FunctionalModule<AdaptiveAvgPool2dImpl, AdaptiveAvgPool2dOptions,
                                                     &functional::adaptive_avg_pool2d, nullptr, &detail::adaptive_pool_repr> {
 public:
  using FunctionalModule::FunctionalModule;
};
LOCUS_MODULE(AdaptiveAvgPool2d);

/// F::adaptive_max_pool2d as a layer.
/// Its forward: the maxima over the adaptive windows.
class AdaptiveMaxPool2dImpl
    : public FunctionalModule<AdaptiveMaxPool2dImpl, AdaptiveMaxPool2dOptions, &functional::adaptive_max_pool2d,
                              &functional::adaptive_max_pool2d_with_indices, &detail::adaptive_pool_repr> {
 public:
  using FunctionalModule::FunctionalModule;
};
LOCUS_MODULE(AdaptiveMaxPool2d);

}  // namespace locus::nn

LOCUS_API_END
