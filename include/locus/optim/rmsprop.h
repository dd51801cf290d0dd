#pragma once
/// \file rmsprop.h
/// torch.optim.RMSprop.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/optim/optimizer.h"

namespace locus::optim {

/// Options of RMSprop (PyTorch's defaults), set by name in any order.
struct RMSpropOptions : CommonOptions<RMSpropOptions> {
  /// The learning rate, positionally.
  RMSpropOptions(double lr = 0.01) : CommonOptions(lr) {}  // NOLINT: implicit, `RMSprop(params, 0.1)`
  /// Smoothing constant of the running mean of squared gradients.
  LOCUS_ARG(double, alpha) = 0.99;
  /// Added to the denominator for stability.
  LOCUS_ARG(double, eps) = 1e-8;
  /// Momentum factor.
  LOCUS_ARG(double, momentum) = 0;
  /// Normalise by the estimated variance of the gradient instead of its second moment.
  LOCUS_ARG(bool, centered) = false;

 public:
  /// Calls f(name, member) for every option (OptimizerCloneableOptions).
  template <typename F>
  void for_each_option(F&& f) {
    CommonOptions::for_each_option(f);
    f("alpha", alpha_), f("eps", eps_), f("momentum", momentum_), f("centered", centered_);
  }
};

/// RMSprop (Hinton), as torch.optim.RMSprop: a running mean of squared gradients, optionally
/// centered (minus the squared running mean of gradients) and with momentum.
class RMSprop : public OptimizerFor<RMSprop, RMSpropOptions> {
  LOCUS_OPTIMIZER_HOOKS(RMSpropOptions);
};

}  // namespace locus::optim

LOCUS_API_END
