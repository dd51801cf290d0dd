// F::binary_cross_entropy and F::binary_cross_entropy_with_logits, composed from elementwise ops
// in PyTorch 1.13's own arithmetic, so values agree to the last bits and autograd differentiates
// them.

#include <sstream>
#include <string>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/functional.h"
#include "locus/ops.h"
#include "src/core/public_op.h"
#include "src/nn/loss_common.h"
#include "src/ops/public_op.h"

namespace locus::nn::functional {
namespace {

// PyTorch's check: the same shape (a ValueError there; ShapeError is one here), floating, one
// dtype, and a weight that broadcasts to the input's shape.
void check_binary_arguments(const char* loss, const Tensor& input, const Tensor& target, const Tensor& weight) {
  if (!(input.shape() == target.shape())) {
    std::ostringstream os;
    os << detail::error_prefix(loss) << "Target size (" << target.shape() << ") must be the same as input size ("
       << input.shape() << ")";
    throw ShapeError(os.str());
  }
  if (!is_floating_point(input.dtype()))
    throw DTypeError(detail::error_prefix(loss) + "needs a floating input, got " +
                     std::string(dtype_name(input.dtype())) + "; convert with .to(kFloat32)");
  loss_checks::check_dtype(loss, "target", target, input.dtype());
  if (weight.defined()) {
    loss_checks::check_dtype(loss, "weight", weight, input.dtype());
    loss_checks::check_broadcasts_to(loss, "weight", weight, input.shape());
  }
}

// max(log(x), -100) without a NaN gradient where x is 0: log(0) = -inf would send 0 * inf back
// through the clamp. PyTorch's own kernel has a hand-written gradient, (x - t) / max(x (1 - x),
// 1e-12), that is huge but finite there; this one is 0 for the clamped term instead. The two
// differ only where x is within e^-100 of 0 or 1 (said in functional.h).
Tensor clamped_log(const Tensor& x) {
  const Tensor positive = x > 0;
  const Tensor safe = where(positive, x, ones_like(x));
  return maximum(where(positive, log(safe), full_like(x, -100.0)), -100.0);
}

}  // namespace

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const BinaryCrossEntropyFuncOptions& options) {
  const Tensor& weight = options.weight();
  const ops::PublicOp op("binary_cross_entropy", {{input, "input"}, {target, "target"}, {weight, "weight"}});
  check_binary_arguments("binary_cross_entropy", input, target, weight);
  if (input.numel() > 0) {
    // PyTorch's kernel checks every element; NaN fails too. Reading the answer waits for the
    // device, as PyTorch's CUDA assertion would stop the stream.
    NoGradGuard no_grad;
    const bool outside = logical_not(logical_and(input >= 0, input <= 1)).sum().item<int64_t>() > 0;
    if (outside)
      throw ValueError(detail::error_prefix("binary_cross_entropy") + "all elements of input should be between 0 and 1");
  }
  // PyTorch's CPU kernel: (t - 1) * max(log(1 - x), -100) - t * max(log(x), -100).
  Tensor losses = (target - 1.0) * clamped_log(1.0 - input) - target * clamped_log(input);
  if (weight.defined()) losses = losses * weight;
  return loss_checks::reduce_loss(losses, options.reduction());
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options) {
  const Tensor& weight = options.weight();
  const Tensor& pos_weight = options.pos_weight();
  const ops::PublicOp op("binary_cross_entropy_with_logits",
                         {{input, "input"}, {target, "target"}, {weight, "weight"}, {pos_weight, "pos_weight"}});
  check_binary_arguments("binary_cross_entropy_with_logits", input, target, weight);
  if (pos_weight.defined()) {
    loss_checks::check_dtype("binary_cross_entropy_with_logits", "pos_weight", pos_weight, input.dtype());
    loss_checks::check_broadcasts_to("binary_cross_entropy_with_logits", "pos_weight", pos_weight, input.shape());
  }
  // PyTorch 1.13's stable form: with m = max(-x, 0),
  //   (1 - t) x + lw (m + log(exp(-m) + exp(-x - m))),  lw = (pos_weight - 1) t + 1 (or 1),
  // where m keeps both exponents <= 0, so neither overflows for logits of any size.
  const Tensor m = clamp(-input, 0.0);
  const Tensor log_sum = log(exp(-m) + exp(-input - m)) + m;
  Tensor losses = (1.0 - target) * input;
  losses = pos_weight.defined() ? losses + ((pos_weight - 1.0) * target + 1.0) * log_sum : losses + log_sum;
  if (weight.defined()) losses = losses * weight;
  return loss_checks::reduce_loss(losses, options.reduction());
}

}  // namespace locus::nn::functional
