// F::l1_loss, F::smooth_l1_loss, F::huber_loss: losses of the difference input - target, composed
// from elementwise ops so that autograd differentiates them.

#include <string>

#include "locus/errors.h"
#include "locus/nn/functional.h"
#include "locus/ops.h"
#include "src/core/public_op.h"
#include "src/nn/loss_common.h"
#include "src/ops/public_op.h"

namespace locus::nn::functional {
namespace {

// |input - target| in the common floating dtype, after the checks every one of them makes.
// Elementwise, so a 0-dim CPU tensor joins as a number (as mse_loss, PyTorch's TensorIterator).
Tensor abs_difference(const char* loss, const Tensor& input, const Tensor& target) {
  loss_checks::check_same_shape(loss, input, target);
  const DType dtype = loss_checks::floating_common_dtype(loss, input, target);
  return abs(input.to(dtype) - target.to(dtype));
}

// Note [Piecewise losses]
// smooth_l1 and huber are quadratic below a threshold and linear above it. Both branches are
// computed and `where` picks one, so the gradient of the branch not taken is multiplied by
// zero; both are finite everywhere, so no NaN leaks through (unlike a log of 0 would). At the
// threshold itself PyTorch takes the linear branch (`z < beta ? quadratic : linear`), as here.

}  // namespace

Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options) {
  const ops::PublicOp op("l1_loss", {{input, "input"}, {target, "target"}}, ops::CpuScalars::Join);
  return loss_checks::reduce_loss(abs_difference("l1_loss", input, target), options.reduction());
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options) {
  const ops::PublicOp op("smooth_l1_loss", {{input, "input"}, {target, "target"}}, ops::CpuScalars::Join);
  const double beta = options.beta();
  if (!(beta >= 0))
    throw ValueError(detail::error_prefix("smooth_l1_loss") + "smooth_l1_loss does not support negative values for beta, got " +
                     std::to_string(beta));
  const Tensor z = abs_difference("smooth_l1_loss", input, target);
  if (beta == 0) return loss_checks::reduce_loss(z, options.reduction());  // PyTorch: exactly l1_loss
  const Tensor losses = where(z < beta, z * z * (0.5 / beta), z - 0.5 * beta);  // Note [Piecewise losses]
  return loss_checks::reduce_loss(losses, options.reduction());
}

Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options) {
  const ops::PublicOp op("huber_loss", {{input, "input"}, {target, "target"}}, ops::CpuScalars::Join);
  const double delta = options.delta();
  if (!(delta > 0))
    throw ValueError(detail::error_prefix("huber_loss") + "huber_loss does not support non-positive values for delta, got " +
                     std::to_string(delta));
  const Tensor z = abs_difference("huber_loss", input, target);
  const Tensor losses = where(z < delta, z * z * 0.5, (z - 0.5 * delta) * delta);  // Note [Piecewise losses]
  return loss_checks::reduce_loss(losses, options.reduction());
}

}  // namespace locus::nn::functional
