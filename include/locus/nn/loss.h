#pragma once
/// \file loss.h
/// Loss functions, as torch.nn.functional: each takes a reduction (mean by default).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>

#include "locus/arg.h"
#include "locus/tensor.h"

namespace locus::nn {

/// How a loss folds its per-element values: their mean, their sum, or none (the values).
enum class Reduction { Mean, Sum, None };

/// Options of nll_loss and cross_entropy, set by name in any order:
/// `ClassLossOptions().ignore_index(0).reduction(Reduction::Sum)`.
struct ClassLossOptions {
  /// Both options at once, in this order (`ClassLossOptions(Reduction::Sum)`).
  ClassLossOptions(Reduction reduction = Reduction::Mean, int64_t ignore_index = -100)
      : reduction_(reduction), ignore_index_(ignore_index) {}
  /// How the per-target losses are folded.
  LOCUS_ARG(Reduction, reduction);
  /// Targets equal to this class contribute nothing, and the mean is over the others (as
  /// PyTorch: -100 by default, so padding can be marked without a mask).
  LOCUS_ARG(int64_t, ignore_index);
};

/// (input - target)^2, reduced. ShapeError when the shapes differ.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
/// -log_probs[i, target[i]] for log-probabilities [N, C] (or [C], or [N, C, d1, ...]) and int64
/// class indices [N] (or 0-dim, or [N, d1, ...]), reduced; a mean over the targets that are not
/// ignore_index (NaN when all are). IndexError for a class outside [0, C); DTypeError for a
/// target that is not int64.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const ClassLossOptions& options = {});
/// nll_loss(log_softmax(logits along the class dim), target): the classification loss of the
/// tutorials. A floating target of the logits' shape holds class probabilities instead:
/// -sum_c target * log_softmax(logits), reduced over the other dims.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const ClassLossOptions& options = {});

}  // namespace locus::nn

LOCUS_API_END
