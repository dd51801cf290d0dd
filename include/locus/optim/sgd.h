#pragma once
/// \file sgd.h
/// torch.optim.SGD.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/optim/optimizer.h"

namespace locus::optim {

/// Options of SGD (PyTorch's defaults), set by name in any order:
/// `SGDOptions(0.1).momentum(0.9).nesterov(true)`.
struct SGDOptions : CommonOptions<SGDOptions> {
  /// The learning rate, positionally.
  SGDOptions(double lr = 0.01) : CommonOptions(lr) {}  // NOLINT: implicit, `SGD(params, 0.1)`
  /// The momentum factor (0: plain SGD).
  LOCUS_ARG(double, momentum) = 0;
  /// Dampening of the momentum.
  LOCUS_ARG(double, dampening) = 0;
  /// Nesterov momentum (needs momentum > 0 and no dampening).
  LOCUS_ARG(bool, nesterov) = false;

 public:
  /// Calls f(name, member) for every option (OptimizerCloneableOptions).
  template <typename F>
  void for_each_option(F&& f) {
    CommonOptions::for_each_option(f);
    f("momentum", momentum_), f("dampening", dampening_), f("nesterov", nesterov_);
  }
};

/// Stochastic gradient descent with momentum, Nesterov momentum and L2 weight decay, as
/// torch.optim.SGD. ValueError for a negative rate or nesterov without momentum.
class SGD : public OptimizerFor<SGD, SGDOptions> {
  LOCUS_OPTIMIZER_HOOKS(SGDOptions);
};

}  // namespace locus::optim

LOCUS_API_END
