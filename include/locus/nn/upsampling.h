#pragma once
/// \file upsampling.h
/// nn::Upsample: F::interpolate as a layer, with LibTorch's options
/// (`nn::Upsample(nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(kNearest))`).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <string>

#include "locus/nn/functional/upsampling.h"
#include "locus/nn/module_holder.h"
#include "locus/nn/options_module.h"

namespace locus::nn {

/// nn::Upsample's options (F::interpolate's, without recompute_scale_factor).
using UpsampleOptions = functional::InterpolateFuncOptions;

namespace detail {
/// Upsample's repr: PyTorch's "scale_factor=2.0, mode=nearest" or "size=(4, 5), mode=bilinear".
std::string upsample_repr(const UpsampleOptions& options);
}  // namespace detail

/// Resizes its input as F::interpolate with the layer's options, printed by upsample_repr. No
/// parameters.
class UpsampleImpl
    : public FunctionalModule<UpsampleImpl, UpsampleOptions, &functional::interpolate, nullptr, &detail::upsample_repr> {
 public:
  /// A layer with the options built from the arguments (none: UpsampleOptions' defaults); its
  /// forward is F::interpolate(input, options).
  using FunctionalModule::FunctionalModule;
};
LOCUS_MODULE(Upsample);

}  // namespace locus::nn

LOCUS_API_END
