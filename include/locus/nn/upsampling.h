#pragma once
/// \file upsampling.h
/// nn::Upsample: F::interpolate as a layer, with LibTorch's options
/// (`nn::Upsample(nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(kNearest))`).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <string>

#include "locus/nn/cloneable.h"
#include "locus/nn/functional/upsampling.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"

namespace locus::nn {

/// nn::Upsample's options (F::interpolate's, without recompute_scale_factor).
using UpsampleOptions = functional::InterpolateFuncOptions;

/// Resizes its input as F::interpolate with the layer's options. No parameters.
class UpsampleImpl : public Cloneable<UpsampleImpl> {
 public:
  /// A layer with `options`.
  explicit UpsampleImpl(const UpsampleOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  /// F::interpolate(input, options).
  Tensor forward(const Tensor& input) override;
  /// PyTorch's "scale_factor=2.0, mode=nearest" or "size=(4, 5), mode=bilinear".
  std::string extra_repr() const override;
  /// The options the layer was built with.
  UpsampleOptions options;
};
LOCUS_MODULE(Upsample);

}  // namespace locus::nn

LOCUS_API_END
