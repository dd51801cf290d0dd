// Losses. Each opens a PublicOp (Note [Public op names] in src/core/public_op.h) and checks its
// arguments' devices, dtypes and shapes first, so an error names the loss the user called and
// its arguments, not an op it is built from.

#include "locus/nn/loss.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <string>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/core/public_op.h"
#include "src/nn/class_layout.h"
#include "src/nn/fused_cross_entropy.h"
#include "src/ops/autocast.h"
#include "src/ops/deferred_check.h"
#include "src/ops/dispatch.h"
#include "src/ops/public_op.h"

namespace locus::nn {
namespace {

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

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  // Elementwise, as PyTorch's TensorIterator kernel: a 0-dim CPU target may join as a number.
  const ops::PublicOp op("mse_loss", {{input, "input"}, {target, "target"}}, ops::CpuScalars::Join);
  if (ops::autocast_active())
    return ops::autocast(OpId::MseLoss, [&](const Tensor& x, const Tensor& t) { return mse_loss(x, t, reduction); }, input, target);
  if (!(input.shape() == target.shape())) {
    std::ostringstream os;
    os << detail::error_prefix("mse_loss") << "input shape " << input.shape() << " and target shape " << target.shape()
       << " differ";
    if (broadcastable(input.shape(), target.shape()))  // Note [Losses do not broadcast]
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
  return reduce(d * d, reduction);
}

namespace {

// nll_loss of checked arguments (check_class_targets); `op_id` is the loss the user called, which
// a target found out of range on cuda names when it is raised later (Note [Deferred checks]).
Tensor nll(const Tensor& log_probs, const Tensor& target, const ClassLossOptions& options, OpId op_id) {
  const Tensor rows = class_rows(log_probs);  // [M, C]
  const int64_t c = rows.size(1);
  const Tensor t = target.reshape({-1});
  Tensor picked;
  std::optional<int64_t> counted;  // targets that count, when known on the host
  const bool ignore_is_a_class = options.ignore_index() >= 0 && options.ignore_index() < c;
  {
    NoGradGuard no_grad;
    // Checked without a wait on cuda (Note [Deferred checks]); a target out of range matches no
    // class below, so nothing reads outside the logits meanwhile.
    counted = ops::check_range(op_id, ops::CheckKind::TargetOutOfBounds, t, c, options.ignore_index());
    // A one-hot mask picks log_probs[i, target[i]] with ops autograd already knows. An ignored
    // target outside [0, C) (the default -100) matches no class, so its row is zero already;
    // one inside needs masking.
    Tensor onehot = arange(c, TensorOptions().device(log_probs.device())).view({1, c}) == t.view({-1, 1});
    if (ignore_is_a_class) onehot = logical_and(onehot, (t != options.ignore_index()).view({-1, 1}));
    picked = onehot.to(log_probs.dtype());
  }
  const Tensor losses = -(rows * picked).sum(1);
  switch (options.reduction()) {
    case Reduction::None: return losses.reshape(class_target_shape(log_probs));
    case Reduction::Sum: return losses.sum();
    default: {
      // The mean over the targets that count. When none does, the loss is NaN and, as in
      // PyTorch, the gradient 0 (not 0/0).
      if (counted) return *counted > 0 ? losses.sum() / static_cast<double>(*counted) : losses.sum() * 0.0 + NAN;
      const Tensor count = (t != options.ignore_index()).sum();  // on the device: no wait
      const Tensor mean = losses.sum() / clamp(count, 1);
      return where(count == 0, full({}, NAN, TensorOptions().dtype(mean.dtype()).device(mean.device())), mean);
    }
  }
}

}  // namespace

// Class losses check devices strictly, as PyTorch's nll_loss: a 0-dim CPU target of an unbatched
// input on another device is a mismatch, not a number.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const ClassLossOptions& options) {
  const ops::PublicOp op("nll_loss", {{log_probs, "input"}, {target, "target"}});
  if (ops::autocast_active())
    return ops::autocast(OpId::NllLoss, [&](const Tensor& x, const Tensor& t) { return nll_loss(x, t, options); }, log_probs, target);
  check_class_targets(log_probs, target);
  if (!is_floating_point(log_probs.dtype()))
    throw DTypeError(detail::error_prefix("nll_loss") + "expects floating log-probabilities as input, got " +
                     std::string(dtype_name(log_probs.dtype())) + "; pass log_softmax(x, 1) of the scores");
  return nll(log_probs, target, options, OpId::NllLoss);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const ClassLossOptions& options) {
  const ops::PublicOp op("cross_entropy", {{logits, "input"}, {target, "target"}});
  if (ops::autocast_active())
    return ops::autocast(OpId::CrossEntropy, [&](const Tensor& x, const Tensor& t) { return cross_entropy(x, t, options); },
                         logits, target);
  const int64_t class_dim = logits.dim() == 1 ? 0 : 1;
  if (is_floating_point(target.dtype())) {
    if (logits.dim() == 0 || !(target.shape() == logits.shape()))
      shape_error(logits, target,
                  "class probabilities of the input's shape (a floating target), or int64 class indices");
    // Class probabilities: -sum_c p * log_softmax, one value per sample (and position).
    const Tensor losses = -(log_softmax(logits, class_dim) * target).sum(class_dim);
    return reduce(losses, options.reduction());
  }
  check_class_targets(logits, target);
  if (std::optional<Tensor> fused = fused_cross_entropy(logits, target, options)) return *fused;
  return nll(log_softmax(logits, class_dim), target, options, OpId::CrossEntropy);
}

}  // namespace locus::nn
