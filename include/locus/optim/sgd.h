#pragma once
/// \file sgd.h
/// torch.optim.SGD.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/arg.h"
#include "locus/optim/optimizer.h"

namespace locus::optim {

/// Options of SGD (PyTorch's defaults), set by name in any order:
/// `SGDOptions(0.1).momentum(0.9).nesterov(true)`.
struct SGDOptions : OptimizerCloneableOptions<SGDOptions> {
  /// The learning rate, positionally.
  SGDOptions(double lr = 0.01) : lr_(lr) {}  // NOLINT: implicit, `SGD(params, 0.1)`
  /// The learning rate.
  LOCUS_ARG(double, lr);
  /// The momentum factor (0: plain SGD).
  LOCUS_ARG(double, momentum) = 0;
  /// Dampening of the momentum.
  LOCUS_ARG(double, dampening) = 0;
  /// L2 penalty added to the gradient.
  LOCUS_ARG(double, weight_decay) = 0;
  /// Nesterov momentum (needs momentum > 0 and no dampening).
  LOCUS_ARG(bool, nesterov) = false;
  /// Keep float32 master copies of float16/bfloat16 parameters and update those (small updates
  /// are not rounded away); the parameters get the rounded result after each step.
  LOCUS_ARG(bool, master_weights) = false;

 public:
  /// Calls f(name, member) for every option (OptimizerCloneableOptions).
  template <typename F>
  void for_each_option(F&& f) {
    f("lr", lr_), f("momentum", momentum_), f("dampening", dampening_), f("weight_decay", weight_decay_);
    f("nesterov", nesterov_), f("master_weights", master_weights_);
  }
};

/// Stochastic gradient descent with momentum, Nesterov momentum and L2 weight decay, as
/// torch.optim.SGD. ValueError for a negative rate or nesterov without momentum.
class SGD : public Optimizer {
 public:
  /// SGD over groups; a group without options gets `defaults`.
  SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults = {});
  /// SGD over one group.
  SGD(std::vector<Tensor> params, SGDOptions defaults = {});
  /// SGD with this learning rate and the other options' defaults: `optim::SGD(params, 0.1)`.
  SGD(std::vector<Tensor> params, double lr) : SGD(std::move(params), SGDOptions(lr)) {}
  /// One update of every parameter that has a gradient, each group with its options.
  void step() override;
  /// The default options.
  const SGDOptions& options() const noexcept { return static_cast<const SGDOptions&>(defaults()); }
};

}  // namespace locus::optim

LOCUS_API_END
