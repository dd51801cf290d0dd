// Tensor's methods for the elementwise ops added with the activations (trigonometric, nan_to_num,
// clamp_min, ...): each forwards to its free function of elementwise.h, and each in-place form
// runs the same op with the tensor as its output (the op path's in-place checks apply). The
// ternary ones live with their functions in pointwise_ternary_ops.cpp.

#include "locus/ops.h"
#include "locus/tensor.h"
#include "src/ops/elementwise_call.h"
#include "src/ops/parameterised_ops.h"

namespace locus {

using ops::OpId;

#define LOCUS_UNARY_METHODS(id, name)                              \
  Tensor Tensor::name() const { return locus::name(*this); }       \
  Tensor& Tensor::name##_() {                                      \
    ops::run_unary(OpId::id, *this, *this);                        \
    return *this;                                                  \
  }
LOCUS_UNARY_METHODS(Tan, tan)
LOCUS_UNARY_METHODS(Sinh, sinh)
LOCUS_UNARY_METHODS(Cosh, cosh)
LOCUS_UNARY_METHODS(Asin, asin)
LOCUS_UNARY_METHODS(Acos, acos)
LOCUS_UNARY_METHODS(Atan, atan)
LOCUS_UNARY_METHODS(Log2, log2)
LOCUS_UNARY_METHODS(Log10, log10)
LOCUS_UNARY_METHODS(Exp2, exp2)
LOCUS_UNARY_METHODS(Reciprocal, reciprocal)
LOCUS_UNARY_METHODS(Square, square)
LOCUS_UNARY_METHODS(Frac, frac)
#undef LOCUS_UNARY_METHODS

Tensor Tensor::isnan() const { return locus::isnan(*this); }
Tensor Tensor::isinf() const { return locus::isinf(*this); }
Tensor Tensor::isfinite() const { return locus::isfinite(*this); }

Tensor Tensor::atan2(const Tensor& o) const { return locus::atan2(*this, o); }
Tensor Tensor::hypot(const Tensor& o) const { return locus::hypot(*this, o); }
Tensor& Tensor::atan2_(const Tensor& o) {
  ops::run_binary(OpId::Atan2, *this, o, *this);
  return *this;
}
Tensor& Tensor::hypot_(const Tensor& o) {
  ops::run_binary(OpId::Hypot, *this, o, *this);
  return *this;
}

Tensor Tensor::nan_to_num(std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) const {
  return locus::nan_to_num(*this, nan, posinf, neginf);
}
Tensor& Tensor::nan_to_num_(std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) {
  ops::run_unary(OpId::NanToNum, *this, *this, ops::nan_to_num_scalars(dtype(), nan, posinf, neginf));
  return *this;
}

Tensor Tensor::clamp_min(const Scalar& min) const { return locus::clamp_min(*this, min); }
Tensor Tensor::clamp_max(const Scalar& max) const { return locus::clamp_max(*this, max); }
Tensor& Tensor::clamp_min_(const Scalar& min) {
  ops::run_unary(OpId::Clamp, *this, *this, min, std::nullopt);
  return *this;
}
Tensor& Tensor::clamp_max_(const Scalar& max) {
  ops::run_unary(OpId::Clamp, *this, *this, std::nullopt, max);
  return *this;
}

}  // namespace locus
