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
#include "locus/nn/cloneable.h"
#include "locus/nn/functional/layer_norm.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"

namespace locus::nn {

/// Options of nn::LayerNorm: `LayerNormOptions({128}).eps(1e-6)`.
struct LayerNormOptions {
  /// The trailing dims normalised together.
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}
  /// The trailing dims normalised together.
  LOCUS_ARG(std::vector<int64_t>, normalized_shape);
  /// Added to the variance.
  LOCUS_ARG(double, eps) = 1e-5;
  /// Learnable elementwise weight (1) and bias (0) of normalized_shape.
  LOCUS_ARG(bool, elementwise_affine) = true;
};

/// Layer normalisation: F::layer_norm with learnable weight and bias. ValueError at
/// construction for a negative size in normalized_shape.
class LayerNormImpl : public Cloneable<LayerNormImpl> {
 public:
  /// A layer with `options`.
  explicit LayerNormImpl(const LayerNormOptions& options);
  /// F::layer_norm.
  Tensor forward(const Tensor& input) override;
  /// Registers weight and bias.
  void reset() override;
  /// Weight 1, bias 0.
  void reset_parameters();
  /// PyTorch's "(128,), eps=1e-05, elementwise_affine=True".
  std::string extra_repr() const override;
  /// The options the layer was built with.
  LayerNormOptions options;
  /// Scale and shift of normalized_shape (undefined without elementwise_affine).
  Tensor weight, bias;
};
LOCUS_MODULE(LayerNorm);

/// Options of nn::RMSNorm: `RMSNormOptions({128}).eps(1e-6)`.
struct RMSNormOptions {
  /// The trailing dims normalised together.
  RMSNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}
  /// The trailing dims normalised together.
  LOCUS_ARG(std::vector<int64_t>, normalized_shape);
  /// Added to the mean square; nullopt: the input dtype's machine epsilon, as PyTorch's.
  LOCUS_ARG(std::optional<double>, eps) = std::nullopt;
  /// Learnable elementwise weight (1) of normalized_shape.
  LOCUS_ARG(bool, elementwise_affine) = true;
};

/// Root-mean-square normalisation (PyTorch 2.4's nn.RMSNorm): F::rms_norm with a learnable
/// weight. ValueError at construction as LayerNorm's.
class RMSNormImpl : public Cloneable<RMSNormImpl> {
 public:
  /// A layer with `options`.
  explicit RMSNormImpl(const RMSNormOptions& options);
  /// F::rms_norm.
  Tensor forward(const Tensor& input) override;
  /// Registers weight.
  void reset() override;
  /// Weight 1.
  void reset_parameters();
  /// PyTorch's "(128,), eps=None, elementwise_affine=True".
  std::string extra_repr() const override;
  /// The options the layer was built with.
  RMSNormOptions options;
  /// Scale of normalized_shape (undefined without elementwise_affine).
  Tensor weight;
};
LOCUS_MODULE(RMSNorm);

}  // namespace locus::nn

LOCUS_API_END
