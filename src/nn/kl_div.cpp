// F::kl_div, as PyTorch 1.13 computes it: xlogy(t, t) - t * x pointwise (exp(t) * (t - x) for
// log targets), then the reduction, batchmean included.

#include "locus/factories.h"
#include "locus/nn/functional.h"
#include "locus/ops.h"
#include "src/nn/loss_common.h"
#include "src/ops/public_op.h"

namespace locus::nn::functional {

Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options) {
  const ops::PublicOp op("kl_div", {{input, "input"}, {target, "target"}}, ops::CpuScalars::Join);
  loss_checks::check_same_shape("kl_div", input, target);
  const DType dtype = loss_checks::floating_common_dtype("kl_div", input, target);
  const Tensor x = input.to(dtype), t = target.to(dtype);
  Tensor losses;
  if (options.log_target()) {
    losses = exp(t) * (t - x);
  } else {
    // xlogy(t, t): 0 where t is 0. log runs on t with its zeros replaced by 1, so the branch
    // `where` drops holds no -inf whose gradient (0 * inf) would be NaN.
    const Tensor zero = t == 0;
    const Tensor safe = where(zero, ones_like(t), t);
    losses = where(zero, zeros_like(t), t * log(safe)) - t * x;
  }
  switch (options.reduction().kind) {
    case KLDivReduction::None: return losses;
    case KLDivReduction::Sum: return losses.sum();
    case KLDivReduction::BatchMean:
      // PyTorch: the sum divided by the batch size, dim 0 (a 0-dim input has no batch: the sum).
      return input.dim() == 0 ? losses.sum() : losses.sum() / static_cast<double>(input.size(0));
    default: return losses.mean();
  }
}

}  // namespace locus::nn::functional
