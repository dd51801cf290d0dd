#pragma once
/// \file affine_norm.h
/// The base of the normalization layers whose only state is a learnable scale, and usually a
/// shift, of a shape fixed by their options (LayerNorm, RMSNorm, GroupNorm): holding the options,
/// registering weight and bias in reset() and reset_parameters() are written once here.
/// Note [Module and options bases] in docs/design.md.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <vector>

#include "locus/arg.h"
#include "locus/autograd.h"
#include "locus/factories.h"
#include "locus/nn/cloneable.h"
#include "locus/tensor.h"

namespace locus::nn {

/// The options LayerNorm and RMSNorm share, for the options `Derived` of one of them: the
/// trailing dims normalised together and whether they carry learnable parameters. The setters
/// return `Derived&` (LOCUS_DERIVED_ARG), so a chain goes on with Derived's own eps.
template <class Derived>
struct NormalizedShapeOptionsBase {
  /// The trailing dims normalised together.
  NormalizedShapeOptionsBase(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}
  /// The trailing dims normalised together.
  LOCUS_DERIVED_ARG(std::vector<int64_t>, normalized_shape);
  /// Learnable elementwise weight (1) and, where the layer has one, bias (0) of normalized_shape.
  LOCUS_DERIVED_ARG(bool, elementwise_affine) = true;
};

/// What a layer's options say about its parameters: their shape, and whether it has them.
struct AffineShape {
  /// The shape of weight and bias.
  Shape shape;
  /// False: weight and bias stay undefined.
  bool learnable = true;
};

namespace detail {
/// The bias member of an AffineNormImplBase that has one (RMSNorm has a weight alone).
template <bool WithBias>
struct AffineBias {
  /// The shift (undefined when the layer is not learnable).
  Tensor bias;
};
/// No bias member.
template <>
struct AffineBias<false> {};
}  // namespace detail

/// A normalization layer of the class `Derived` with `Options` whose state is `weight` (1) and,
/// with `WithBias`, `bias` (0): built from its options, it registers them in reset() under
/// PyTorch's names and order (weight, then bias). Derived says only its forward, its repr and,
/// as the private static `AffineShape affine_shape(const Options&)` the base is a friend of,
/// the parameters' shape; affine_shape is also where it checks its options (it runs at
/// construction, before any tensor is made).
template <class Derived, class Options, bool WithBias = true>
class AffineNormImplBase : public Cloneable<Derived>, public detail::AffineBias<WithBias> {
 public:
  /// A layer with options `o` (ValueError for options Derived refuses).
  explicit AffineNormImplBase(const Options& o) : options(o) { reset(); }
  /// Registers weight and bias (undefined when the layer is not learnable).
  void reset() override {
    const AffineShape a = Derived::affine_shape(options);
    weight = a.learnable ? this->register_parameter("weight", ones(a.shape)) : Tensor();
    if constexpr (WithBias) this->bias = a.learnable ? this->register_parameter("bias", zeros(a.shape)) : Tensor();
  }
  /// Weight 1, bias 0.
  void reset_parameters() {
    if (!Derived::affine_shape(options).learnable) return;
    NoGradGuard no_grad;
    weight.fill_(1);
    if constexpr (WithBias) this->bias.zero_();
  }
  /// The options the layer was built with.
  Options options;
  /// The scale (undefined when the layer is not learnable).
  Tensor weight;
};

}  // namespace locus::nn

LOCUS_API_END
