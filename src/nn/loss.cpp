// Losses. Each opens a PublicOp (Note [Public op names] in src/core/public_op.h) and checks its
// arguments' devices, dtypes and shapes first, so an error names the loss the user called and
// its arguments, not an op it is built from.

#include "locus/nn/loss.h"

#include "locus/nn_ops.h"

#include <vector>


#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/functional.h"
#include "locus/ops.h"
#include "src/core/public_op.h"
#include "src/nn/loss_common.h"
#include "src/ops/autocast.h"
#include "src/ops/class_layout.h"
#include "src/ops/cross_entropy.h"
#include "src/ops/deferred_check.h"
#include "src/ops/public_op.h"

namespace locus::nn {
namespace {

using ops::class_rows;
using ops::class_target_shape;
using ops::OpId;

Tensor reduce(const Tensor& losses, Reduction reduction) {
  switch (reduction) {
    case Reduction::Sum: return losses.sum();
    case Reduction::None: return losses;
    default: return losses.mean();
  }
}

// Inside a loss's PublicOp, the prefix names that loss (nll_loss's checks also serve cross_entropy).
[[noreturn]] void shape_error(const Tensor& input, const Tensor& target, const char* expected) {
  std::ostringstream os;
  os << detail::error_prefix("nll_loss") << "expects " << expected << ", got input " << input.shape() << " and target "
     << target.shape();
  throw ShapeError(os.str());
}

// The checks of class-index targets, before anything runs: an input with a class dim, and int64
// targets of its shape without that dim.
void check_class_targets(const Tensor& input, const Tensor& target) {
  if (input.dim() == 0)
    shape_error(input, target, "an input of at least one dimension ([C], [N, C] or [N, C, d1, ...])");
  if (target.dtype() != kInt64)
    throw DTypeError(detail::error_prefix("nll_loss") + "expects class indices of dtype int64 as target, got " +
                     std::string(dtype_name(target.dtype())) + "; convert with .to(kInt64)");
  if (target.shape() == class_target_shape(input)) return;
  shape_error(input, target,
              input.dim() == 1 ? "a 0-dim target for an unbatched [C] input"
                               : "a target of the input's shape without the class dim 1");
}


// Note [Losses do not broadcast]
// PyTorch's mse_loss broadcasts input and target of different shapes, after a UserWarning that
// the result is likely wrong. It almost always is: a model's [N, 1] output against a [N] target
// becomes an [N, N] table of differences and a mean that trains towards the targets' mean, with
// nothing failing. Locus refuses different shapes (one of the deviations in docs/design.md) and
// says why when PyTorch would have gone ahead.
bool broadcastable(const Shape& a, const Shape& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 1; i <= n; ++i) {
    const int64_t x = a[a.size() - i], y = b[b.size() - i];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

}  // namespace
}  // namespace locus::nn

namespace locus {

Tensor mse_loss(const Tensor& input, const Tensor& target, nn::Reduction reduction) {
  // Elementwise, as PyTorch's TensorIterator kernel: a 0-dim CPU target may join as a number.
  const ops::PublicOp op("mse_loss", {{input, "input"}, {target, "target"}}, ops::CpuScalars::Join);
  if (ops::autocast_active())
    return ops::autocast(ops::OpId::MseLoss, [&](const Tensor& x, const Tensor& t) { return mse_loss(x, t, reduction); }, input, target);
  if (!(input.shape() == target.shape())) {
    std::ostringstream os;
    os << detail::error_prefix("mse_loss") << "input shape " << input.shape() << " and target shape " << target.shape()
       << " differ";
    if (nn::broadcastable(input.shape(), target.shape()))  // Note [Losses do not broadcast]
      os << "; PyTorch would broadcast them with a warning, Locus refuses: a broadcast loss is almost always a bug "
            "(an output of [N, 1] against a target of [N] compares every output with every target); give both the "
            "same shape (reshape, squeeze or expand_as)";
    throw ShapeError(os.str());
  }
  // PyTorch computes in the common dtype of the two (a bool or integer target joins a floating
  // input), and has no integer kernel.
  const DType dtype = result_type(input, target);
  if (!is_floating_point(dtype))
    throw DTypeError(detail::error_prefix("mse_loss") + "needs a floating input or target, got " +
                     std::string(dtype_name(input.dtype())) + " and " + std::string(dtype_name(target.dtype())) +
                     "; convert with .to(kFloat32)");
  const Tensor d = input.to(dtype) - target.to(dtype);
  return nn::reduce(d * d, reduction);
}

}  // namespace locus

namespace locus::nn {

namespace {

// The class each target picks, as a one-hot [M, C] mask in `dtype` (M = the targets, flattened):
// an ignored target, or one out of [0, C) which check_range reports, picks none.
Tensor class_picks(const Tensor& t, int64_t c, int64_t ignore_index, DType dtype, Device device) {
  NoGradGuard no_grad;
  Tensor onehot = arange(c, TensorOptions().device(device)).view({1, c}) == t.view({-1, 1});
  // An ignored target outside [0, C) (the default -100) matches no class, so its row is zero
  // already; one inside needs masking.
  if (ignore_index >= 0 && ignore_index < c) onehot = logical_and(onehot, (t != ignore_index).view({-1, 1}));
  return onehot.to(dtype);
}

// total / denominator, NaN where the denominator is 0 (every target ignored or weighted 0) with
// a gradient of 0 rather than 0/0, as PyTorch.
Tensor mean_or_nan(const Tensor& total, const Tensor& denominator) {
  const Tensor none = denominator == 0;
  const Tensor mean = total / where(none, ones_like(denominator), denominator);
  return where(none, full({}, NAN, TensorOptions().dtype(mean.dtype()).device(mean.device())), mean);
}

// nll_loss of checked arguments (check_class_targets, check_class_weight); `op_id` is the loss
// the user called, which a target found out of range on cuda names when it is raised later
// (Note [Deferred checks]). `weight` is undefined or [C].
Tensor nll(const Tensor& log_probs, const Tensor& target, Reduction reduction, int64_t ignore_index, const Tensor& weight,
           OpId op_id) {
  const Tensor rows = class_rows(log_probs);  // [M, C]
  const int64_t c = rows.size(1);
  const Tensor t = target.reshape({-1});
  std::optional<int64_t> counted;  // targets that count, when known on the host
  {
    NoGradGuard no_grad;
    // Checked without a wait on cuda (Note [Deferred checks]); a target out of range matches no
    // class below, so nothing reads outside the logits meanwhile.
    counted = ops::check_range(op_id, ops::CheckKind::TargetOutOfBounds, t, c, ignore_index);
  }
  // A one-hot mask picks log_probs[i, target[i]] with ops autograd already knows.
  Tensor picked = class_picks(t, c, ignore_index, log_probs.dtype(), log_probs.device());
  if (weight.defined()) picked = picked * weight.view({1, c});
  const Tensor losses = -(rows * picked).sum(1);
  switch (reduction) {
    case Reduction::None: return losses.reshape(class_target_shape(log_probs));
    case Reduction::Sum: return losses.sum();
    default: {
      // The mean over the targets that count, each weighted: sum / the sum of their weights.
      // When none counts, the loss is NaN and, as in PyTorch, the gradient 0 (not 0/0).
      if (weight.defined()) return mean_or_nan(losses.sum(), picked.sum());
      if (counted) return *counted > 0 ? losses.sum() / static_cast<double>(*counted) : losses.sum() * 0.0 + NAN;
      return mean_or_nan(losses.sum(), (t != ignore_index).sum().to(losses.dtype()));  // on the device: no wait
    }
  }
}

// PyTorch's check of a class weight: [C] (or undefined), of the input's dtype.
void check_class_weight(const char* loss, const Tensor& input, const Tensor& weight) {
  if (!weight.defined()) return;
  const int64_t c = input.dim() == 0 ? 0 : input.size(input.dim() == 1 ? 0 : 1);
  if (weight.dim() != 1 || weight.size(0) != c) {
    std::ostringstream os;
    os << detail::error_prefix(loss) << "weight tensor should be defined either for all " << c
       << " classes or no classes but got weight tensor of shape: " << weight.shape();
    throw ShapeError(os.str());
  }
  loss_checks::check_dtype(loss, "weight", weight, input.dtype());
}

// A [C] weight shaped to multiply [N, C, d1, ...] (or [C]) along the class dim.
Tensor along_class_dim(const Tensor& weight, const Tensor& input) {
  if (input.dim() <= 1) return weight;
  std::vector<int64_t> shape(static_cast<size_t>(input.dim()), 1);
  shape[1] = weight.size(0);
  return weight.view(Shape(shape));
}

// cross_entropy of any options, after the PublicOp.
Tensor cross_entropy_checked(const Tensor& logits, const Tensor& target, const CrossEntropyLossOptions& options) {
  const double smoothing = options.label_smoothing();
  if (!(smoothing >= 0 && smoothing <= 1))
    throw ValueError(detail::error_prefix("cross_entropy") + "label_smoothing must be between 0.0 and 1.0. Got: " +
                     std::to_string(smoothing));
  const Tensor& weight = options.weight();
  const int64_t class_dim = logits.dim() == 1 ? 0 : 1;
  if (is_floating_point(target.dtype())) {
    if (logits.dim() == 0 || !(target.shape() == logits.shape()))
      shape_error(logits, target,
                  "class probabilities of the input's shape (a floating target), or int64 class indices");
    if (options.ignore_index() >= 0)
      throw ValueError(detail::error_prefix("cross_entropy") + "ignore_index is not supported for floating point target");
    check_class_weight("cross_entropy", logits, weight);
    // Class probabilities: -sum_c w_c p_c log_softmax_c, one value per sample (and position),
    // the probabilities first mixed with the uniform distribution when smoothing. The mean is
    // over the samples, not their weights (PyTorch 1.13).
    const double c = static_cast<double>(logits.size(class_dim));
    const Tensor probs = smoothing > 0 ? target * (1.0 - smoothing) + smoothing / c : target;
    Tensor terms = log_softmax(logits, class_dim) * probs;
    if (weight.defined()) terms = terms * along_class_dim(weight, logits);
    return reduce(-terms.sum(class_dim), options.reduction());
  }
  check_class_targets(logits, target);
  check_class_weight("cross_entropy", logits, weight);
  if (!weight.defined() && smoothing == 0) {
    const auto composed = [target = target.detach(), reduction = options.reduction(), ignore = options.ignore_index(),
                           class_dim](const Tensor& x) {
      return nll(log_softmax(x, class_dim), target, reduction, ignore, Tensor(), OpId::CrossEntropy);
    };
    if (std::optional<Tensor> fused = ops::fused_cross_entropy(logits, target, options.reduction(), options.ignore_index(), composed))
      return *fused;
  }
  const Tensor log_probs = log_softmax(logits, class_dim);
  const Tensor loss = nll(log_probs, target, options.reduction(), options.ignore_index(), weight, OpId::CrossEntropy);
  if (smoothing == 0) return loss;
  // Note [Label smoothing]: PyTorch 1.13 adds to (1 - s) * nll the loss against the uniform
  // distribution, s / C * smooth, with smooth = -sum_c w_c log_softmax_c per target, 0 for an
  // ignored one; its mean divides by the weights of the counted targets (their count without
  // weights), as nll's does.
  const int64_t c = logits.size(class_dim);
  Tensor smooth = -(weight.defined() ? log_probs * along_class_dim(weight, logits) : log_probs).sum(class_dim);
  const Tensor ignored = target == options.ignore_index();
  smooth = where(ignored, zeros_like(smooth), smooth);
  Tensor reduced;
  switch (options.reduction()) {
    case Reduction::None: reduced = smooth; break;
    case Reduction::Sum: reduced = smooth.sum(); break;
    default: {
      Tensor denominator;
      if (weight.defined()) {
        const Tensor t = target.reshape({-1});
        denominator = (class_picks(t, c, options.ignore_index(), weight.dtype(), weight.device()) * weight.view({1, c})).sum();
      } else {
        denominator = logical_not(ignored).sum().to(smooth.dtype());
      }
      reduced = mean_or_nan(smooth.sum(), denominator);
    }
  }
  return loss * (1.0 - smoothing) + reduced * (smoothing / static_cast<double>(c));
}

}  // namespace

// Class losses check devices strictly, as PyTorch's nll_loss: a 0-dim CPU target of an unbatched
// input on another device is a mismatch, not a number.
namespace functional {

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options) {
  const ops::PublicOp op("nll_loss", {{input, "input"}, {target, "target"}, {options.weight(), "weight"}});
  if (ops::autocast_active())
    return ops::autocast(OpId::NllLoss, [&](const Tensor& x, const Tensor& t) { return nll_loss(x, t, options); }, input, target);
  check_class_targets(input, target);
  if (!is_floating_point(input.dtype()))
    throw DTypeError(detail::error_prefix("nll_loss") + "expects floating log-probabilities as input, got " +
                     std::string(dtype_name(input.dtype())) + "; pass log_softmax(x, 1) of the scores");
  check_class_weight("nll_loss", input, options.weight());
  return nll(input, target, options.reduction(), options.ignore_index(), options.weight(), OpId::NllLoss);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options) {
  const ops::PublicOp op("cross_entropy", {{input, "input"}, {target, "target"}, {options.weight(), "weight"}});
  if (ops::autocast_active())
    return ops::autocast(OpId::CrossEntropy, [&](const Tensor& x, const Tensor& t) { return cross_entropy(x, t, options); },
                         input, target);
  return cross_entropy_checked(input, target, options);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options) {
  return locus::mse_loss(input, target, options.reduction());
}

}  // namespace functional
}  // namespace locus::nn
