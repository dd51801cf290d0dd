#pragma once
/// \file rmsprop.h
/// torch.optim.RMSprop.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/arg.h"
#include "locus/optim/optimizer.h"

namespace locus::optim {

/// Options of RMSprop (PyTorch's defaults), set by name in any order.
struct RMSpropOptions : OptimizerCloneableOptions<RMSpropOptions> {
  /// The learning rate, positionally.
  RMSpropOptions(double lr = 0.01) : lr_(lr) {}  // NOLINT: implicit, `RMSprop(params, 0.1)`
  /// The learning rate.
  LOCUS_ARG(double, lr);
  /// Smoothing constant of the running mean of squared gradients.
  LOCUS_ARG(double, alpha) = 0.99;
  /// Added to the denominator for stability.
  LOCUS_ARG(double, eps) = 1e-8;
  /// L2 penalty added to the gradient.
  LOCUS_ARG(double, weight_decay) = 0;
  /// Momentum factor.
  LOCUS_ARG(double, momentum) = 0;
  /// Normalise by the estimated variance of the gradient instead of its second moment.
  LOCUS_ARG(bool, centered) = false;
  /// Keep float32 master copies of float16/bfloat16 parameters (as SGDOptions::master_weights).
  LOCUS_ARG(bool, master_weights) = false;

 public:
  /// Calls f(name, member) for every option (OptimizerCloneableOptions).
  template <typename F>
  void for_each_option(F&& f) {
    f("lr", lr_), f("alpha", alpha_), f("eps", eps_), f("weight_decay", weight_decay_), f("momentum", momentum_),
        f("centered", centered_), f("master_weights", master_weights_);
  }
};

/// RMSprop (Hinton), as torch.optim.RMSprop: a running mean of squared gradients, optionally centered (minus the
/// squared running mean of gradients) and with momentum.
class RMSprop : public Optimizer {
 public:
  /// RMSprop over groups; a group without options gets `defaults`.
  RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults = {});
  /// RMSprop over one group.
  RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {})
      : RMSprop(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
  /// RMSprop with this learning rate and the other options' defaults.
  RMSprop(std::vector<Tensor> params, double lr) : RMSprop(std::move(params), RMSpropOptions(lr)) {}
  /// One update of every parameter that has a gradient, each group with its options.
  void step() override;
  /// The default options.
  const RMSpropOptions& options() const noexcept { return static_cast<const RMSpropOptions&>(defaults()); }
};

}  // namespace locus::optim

LOCUS_API_END
