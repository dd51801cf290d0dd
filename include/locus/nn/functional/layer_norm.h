#pragma once
/// \file layer_norm.h
/// The per-sample normalizations of torch.nn.functional: F::layer_norm and F::rms_norm.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>
#include <vector>

#include "locus/arg.h"
#include "locus/tensor.h"

namespace locus::nn::functional {

/// Options of F::layer_norm: `F::LayerNormFuncOptions({128}).weight(w).bias(b)`.
struct LayerNormFuncOptions {
  /// The trailing dims normalised together (the input's last normalized_shape.size() dims).
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}
  /// The trailing dims normalised together.
  LOCUS_ARG(std::vector<int64_t>, normalized_shape);
  /// Elementwise scale of normalized_shape; undefined: 1.
  LOCUS_ARG(Tensor, weight);
  /// Elementwise shift of normalized_shape; undefined: 0.
  LOCUS_ARG(Tensor, bias);
  /// Added to the variance.
  LOCUS_ARG(double, eps) = 1e-5;
};

/// As F.layer_norm: each sample's last normalized_shape.size() dims normalised by their mean and
/// biased variance, then scaled and shifted elementwise. Computed in float32 for
/// float16/bfloat16 inputs and returned in their dtype (autocast's float32 list). ShapeError, with
/// PyTorch's message, when the input's trailing dims or weight/bias differ from normalized_shape.
/// Differentiable in input, weight and bias.
Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options);

/// Options of F::rms_norm: `F::RMSNormFuncOptions({128}).weight(w)`.
struct RMSNormFuncOptions {
  /// The trailing dims normalised together.
  RMSNormFuncOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}
  /// The trailing dims normalised together.
  LOCUS_ARG(std::vector<int64_t>, normalized_shape);
  /// Elementwise scale of normalized_shape; undefined: 1.
  LOCUS_ARG(Tensor, weight);
  /// Added to the mean square; nullopt: the machine epsilon of the input's dtype (PyTorch's
  /// default, torch.finfo(x.dtype).eps).
  LOCUS_ARG(std::optional<double>, eps) = std::nullopt;
};

/// As F.rms_norm (PyTorch 2.4): x / sqrt(mean(x^2) + eps) over the last normalized_shape.size()
/// dims, times weight. Computed in float32 for float16/bfloat16 inputs. ShapeError as
/// layer_norm's. Differentiable in input and weight.
Tensor rms_norm(const Tensor& input, const RMSNormFuncOptions& options);

}  // namespace locus::nn::functional

LOCUS_API_END
