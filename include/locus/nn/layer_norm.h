#pragma once
/// \file layer_norm.h
/// nn::LayerNorm and nn::RMSNorm, the transformer's normalizations. State_dict names as
/// PyTorch's: weight, bias (LayerNorm), weight (RMSNorm).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "locus/arg.h"
#include "locus/nn/affine_norm.h"
#include "locus/nn/functional/layer_norm.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"

namespace locus::nn {

/// Options of nn::LayerNorm: `LayerNormOptions({128}).eps(1e-6)`.
struct LayerNormOptions : NormalizedShapeOptionsBase<LayerNormOptions> {
  using NormalizedShapeOptionsBase::NormalizedShapeOptionsBase;
  /// Added to the variance.
  LOCUS_ARG(double, eps) = 1e-5;
};

/// Layer normalisation: F::layer_norm with learnable weight and bias. ValueError at
/// construction for a negative size in normalized_shape.
class LayerNormImpl : public AffineNormImplBase<LayerNormImpl, LayerNormOptions> {
 public:
  using AffineNormImplBase::AffineNormImplBase;
  /// F::layer_norm.
  Tensor forward(const Tensor& input) override;
  /// PyTorch's "(128,), eps=1e-05, elementwise_affine=True".
  std::string extra_repr() const override;

 private:
  friend AffineNormImplBase;
  static AffineShape affine_shape(const LayerNormOptions& o);
};
LOCUS_MODULE(LayerNorm);

/// Options of nn::RMSNorm: `RMSNormOptions({128}).eps(1e-6)`.
struct RMSNormOptions : NormalizedShapeOptionsBase<RMSNormOptions> {
  using NormalizedShapeOptionsBase::NormalizedShapeOptionsBase;
  /// Added to the mean square; nullopt: the input dtype's machine epsilon, as PyTorch's.
  LOCUS_ARG(std::optional<double>, eps) = std::nullopt;
};

/// Root-mean-square normalisation (PyTorch 2.4's nn.RMSNorm): F::rms_norm with a learnable
/// weight (no bias). ValueError at construction as LayerNorm's.
class RMSNormImpl : public AffineNormImplBase<RMSNormImpl, RMSNormOptions, /*WithBias=*/false> {
 public:
  using AffineNormImplBase::AffineNormImplBase;
  /// F::rms_norm.
  Tensor forward(const Tensor& input) override;
  /// PyTorch's "(128,), eps=None, elementwise_affine=True".
  std::string extra_repr() const override;

 private:
  friend AffineNormImplBase;
  static AffineShape affine_shape(const RMSNormOptions& o);
};
LOCUS_MODULE(RMSNorm);

}  // namespace locus::nn

LOCUS_API_END
