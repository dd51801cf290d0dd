// Losses. They check their operands' devices and dtypes first, so an error names the loss the
// user called, not an op it is built from.

#include "locus/nn/loss.h"

#include <cmath>
#include <optional>
#include <sstream>
#include <string>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/ops/deferred_check.h"
#include "src/ops/dispatch.h"

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

[[noreturn]] void shape_error(const char* op, const Tensor& input, const Tensor& target, const char* expected) {
  std::ostringstream os;
  os << "[locus::" << op << "] expects " << expected << ", got input " << input.shape() << " and target " << target.shape();
  throw ShapeError(os.str());
}

// Input [N, C, d1, ...] as [N * d1 * ..., C] with the class dim last, and the target's shape.
struct Flat {
  Tensor input;  ///< [M, C]
  Shape target_shape;
};

Flat flatten_classes(const Tensor& input, const Tensor& target, const char* op) {
  if (input.dim() == 1) {  // unbatched: [C] with a 0-dim target
    if (target.dim() != 0) shape_error(op, input, target, "a 0-dim target for an unbatched [C] input");
    return {input.unsqueeze(0), Shape{}};
  }
  if (input.dim() < 1) shape_error(op, input, target, "an input of at least one dimension");
  Shape want;
  want.push_back(input.size(0));
  for (int64_t d = 2; d < input.dim(); ++d) want.push_back(input.size(d));
  if (!(target.shape() == want)) shape_error(op, input, target, "a target of the input's shape without the class dim 1");
  const int64_t c = input.size(1);
  if (input.dim() == 2) return {input, want};
  Shape order{0};
  for (int64_t d = 2; d < input.dim(); ++d) order.push_back(d);
  order.push_back(1);
  return {input.permute(order).reshape({-1, c}), want};
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  ops::common_device(OpId::MseLoss, {{input, "self"}, {target, "target"}});
  if (!(input.shape() == target.shape())) {
    std::ostringstream os;
    os << "[locus::mse_loss] input shape " << input.shape() << " and target shape " << target.shape() << " differ";
    throw ShapeError(os.str());
  }
  const Tensor d = input - target;
  return reduce(d * d, reduction);
}

namespace {

// nll_loss, with errors naming `op` (the loss the user called).
Tensor nll(const Tensor& log_probs, const Tensor& target, const ClassLossOptions& options, OpId op_id) {
  const std::string name(ops::op_name(op_id));
  const char* op = name.c_str();
  if (target.dtype() != kInt64)
    throw DTypeError(std::string("[locus::") + op + "] expects class indices of dtype int64 as target, got " +
                     std::string(dtype_name(target.dtype())) + "; convert with .to(kInt64)");
  const Flat flat = flatten_classes(log_probs, target, op);
  const int64_t c = flat.input.size(1);
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
  const Tensor losses = -(flat.input * picked).sum(1);
  switch (options.reduction()) {
    case Reduction::None: return losses.reshape(flat.target_shape);
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

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const ClassLossOptions& options) {
  ops::common_device(OpId::NllLoss, {{log_probs, "self"}, {target, "target"}});
  return nll(log_probs, target, options, OpId::NllLoss);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const ClassLossOptions& options) {
  ops::common_device(OpId::CrossEntropy, {{logits, "self"}, {target, "target"}});
  const int64_t class_dim = logits.dim() == 1 ? 0 : 1;
  if (is_floating_point(target.dtype())) {
    if (!(target.shape() == logits.shape()))
      shape_error("cross_entropy", logits, target, "class probabilities of the input's shape (a floating target), or int64 class indices");
    // Class probabilities: -sum_c p * log_softmax, one value per sample (and position).
    const Tensor losses = -(log_softmax(logits, class_dim) * target).sum(class_dim);
    return reduce(losses, options.reduction());
  }
  return nll(log_softmax(logits, class_dim), target, options, OpId::CrossEntropy);
}

}  // namespace locus::nn
