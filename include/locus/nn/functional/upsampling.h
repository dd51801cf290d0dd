#pragma once
/// \file upsampling.h
/// F::interpolate, as LibTorch's `torch::nn::functional::interpolate`: nearest, linear (3-d
/// inputs) and bilinear (4-d inputs) resizing with PyTorch 1.13's index arithmetic.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>
#include <vector>

#include "locus/arg.h"
#include "locus/tensor.h"

namespace locus {
namespace nn::functional {
/// How F::interpolate computes a new element.
enum class InterpolateMode {
  Nearest,   ///< the input element at floor(i * scale) (PyTorch's 'nearest')
  Linear,    ///< linear between the two nearest input elements, over [N, C, L]
  Bilinear,  ///< linear in both dims, over [N, C, H, W]
};
}  // namespace nn::functional

/// LibTorch's mode constants: `F::InterpolateFuncOptions().mode(kBilinear)`.
inline constexpr nn::functional::InterpolateMode kNearest = nn::functional::InterpolateMode::Nearest;
/// Linear interpolation over one spatial dim.
inline constexpr nn::functional::InterpolateMode kLinear = nn::functional::InterpolateMode::Linear;
/// Linear interpolation over two spatial dims.
inline constexpr nn::functional::InterpolateMode kBilinear = nn::functional::InterpolateMode::Bilinear;

namespace nn::functional {

/// Options of F::interpolate: `InterpolateFuncOptions().scale_factor({2, 2}).mode(kBilinear).align_corners(false)`.
struct InterpolateFuncOptions {
  /// The output's spatial size (one number per spatial dim, or one for all); exactly one of
  /// size and scale_factor.
  LOCUS_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  /// The factor of each spatial dim (or one for all): the output size is floor(input * factor).
  LOCUS_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  /// Nearest (the default), linear or bilinear.
  LOCUS_ARG(InterpolateMode, mode) = InterpolateMode::Nearest;
  /// Linear modes: align the corner elements' centres (true) or their outer edges (false,
  /// PyTorch's default); must stay unset for nearest.
  LOCUS_ARG(std::optional<bool>, align_corners) = std::nullopt;
  /// With scale_factor: compute the output size, then index with input / output rather than
  /// with 1 / scale_factor.
  LOCUS_ARG(std::optional<bool>, recompute_scale_factor) = std::nullopt;
};

/// As F.interpolate (PyTorch 1.13): nearest over [N, C, L] or [N, C, H, W], linear over
/// [N, C, L], bilinear over [N, C, H, W]; the indices and weights PyTorch's CPU kernels compute.
/// ValueError for neither or both of size and scale_factor, align_corners with nearest, a size
/// list of the wrong length, a non-positive output size; NotImplementedError for a mode the
/// input's rank does not have (as PyTorch). Differentiable (gathers and products).
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {});

}  // namespace nn::functional
}  // namespace locus

LOCUS_API_END
