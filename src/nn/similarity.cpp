// F::cosine_similarity and F::normalize: vector norms along a dim, with their zero-norm guard.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/functional.h"
#include "locus/ops.h"
#include "src/core/public_op.h"
#include "src/ops/public_op.h"

namespace locus::nn::functional {
namespace {

// Note [Norms at zero]
// sqrt's gradient at 0 is infinite, and the clamp after it passes 0 back: 0 * inf is NaN. PyTorch's
// norm has a hand-written gradient that is 0 there; this one takes the root of the squares with
// the zeros replaced by 1 and selects 0 for them, which gives the same value and gradient.
Tensor two_norm(const Tensor& x, int64_t dim, bool keepdim) {
  const Tensor squares = (x * x).sum(dim, keepdim);
  const Tensor nonzero = squares > 0;
  return where(nonzero, sqrt(where(nonzero, squares, ones_like(squares))), zeros_like(squares));
}

// ||x||_p along dim for p >= 1 (p = inf: the largest magnitude).
Tensor p_norm(const Tensor& x, double p, int64_t dim) {
  if (p == 2) return two_norm(x, dim, true);
  if (p == 1) return abs(x).sum(dim, true);
  if (std::isinf(p) && p > 0) return abs(x).max(dim, true).values;
  const Tensor powers = pow(abs(x), p).sum(dim, true);  // Note [Norms at zero], for any p
  const Tensor nonzero = powers > 0;
  return where(nonzero, pow(where(nonzero, powers, ones_like(powers)), 1.0 / p), zeros_like(powers));
}

}  // namespace

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& options) {
  const ops::PublicOp op("cosine_similarity", {{x1, "x1"}, {x2, "x2"}});
  const DType dtype = result_type(x1, x2);
  if (!is_floating_point(dtype))
    throw DTypeError(detail::error_prefix("cosine_similarity") + "expected common dtype to be floating point, yet common dtype is " +
                     std::string(dtype_name(dtype)));
  // Broadcast first, so the dim and the norms are those of the common shape.
  const Tensor a0 = x1.to(dtype), b0 = x2.to(dtype);
  const Tensor sum_ab = a0 * b0;  // raises the broadcast ShapeError under this function's name
  const Tensor a = a0.expand(sum_ab.shape()), b = b0.expand(sum_ab.shape());
  const int64_t dim = options.dim();
  const int64_t rank = std::max<int64_t>(sum_ab.dim(), 1);
  if (dim < -rank || dim >= rank)
    throw IndexError(detail::error_prefix("cosine_similarity") + "Dimension out of range (expected to be in range of [" +
                     std::to_string(-rank) + ", " + std::to_string(rank - 1) + "], but got " + std::to_string(dim) + ")");
  // PyTorch 1.13: each norm clamped to eps, then sum(x1 x2) / (|x1| |x2|).
  const double eps = options.eps();
  const Tensor n1 = clamp(two_norm(a, dim, false), eps), n2 = clamp(two_norm(b, dim, false), eps);
  return sum_ab.sum(dim) / (n1 * n2);
}

Tensor normalize(const Tensor& input, const NormalizeFuncOptions& options) {
  const ops::PublicOp op("normalize", {{input, "input"}});
  if (!is_floating_point(input.dtype()))
    throw DTypeError(detail::error_prefix("normalize") + "needs a floating input, got " +
                     std::string(dtype_name(input.dtype())) + "; convert with .to(kFloat32)");
  const double p = options.p();
  if (!(p >= 1))
    throw ValueError(detail::error_prefix("normalize") + "supports p >= 1 (or infinity), got " + std::to_string(p));
  const int64_t rank = std::max<int64_t>(input.dim(), 1), dim = options.dim();
  if (dim < -rank || dim >= rank)
    throw IndexError(detail::error_prefix("normalize") + "Dimension out of range (expected to be in range of [" +
                     std::to_string(-rank) + ", " + std::to_string(rank - 1) + "], but got " + std::to_string(dim) + ")");
  return input / clamp(p_norm(input, p, dim), options.eps());
}

}  // namespace locus::nn::functional
