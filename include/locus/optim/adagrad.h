#pragma once
/// \file adagrad.h
/// torch.optim.Adagrad.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/arg.h"
#include "locus/optim/optimizer.h"

namespace locus::optim {

/// Options of Adagrad (PyTorch's defaults), set by name in any order.
struct AdagradOptions : OptimizerCloneableOptions<AdagradOptions> {
  /// The learning rate, positionally.
  AdagradOptions(double lr = 0.01) : lr_(lr) {}  // NOLINT: implicit, `Adagrad(params, 0.1)`
  /// The learning rate.
  LOCUS_ARG(double, lr);
  /// The learning rate decays as lr / (1 + (step - 1) * lr_decay).
  LOCUS_ARG(double, lr_decay) = 0;
  /// L2 penalty added to the gradient.
  LOCUS_ARG(double, weight_decay) = 0;
  /// The starting value of the sum of squared gradients.
  LOCUS_ARG(double, initial_accumulator_value) = 0;
  /// Added to the denominator for stability.
  LOCUS_ARG(double, eps) = 1e-10;
  /// Keep float32 master copies of float16/bfloat16 parameters (as SGDOptions::master_weights).
  LOCUS_ARG(bool, master_weights) = false;

 public:
  /// Calls f(name, member) for every option (OptimizerCloneableOptions).
  template <typename F>
  void for_each_option(F&& f) {
    f("lr", lr_), f("lr_decay", lr_decay_), f("weight_decay", weight_decay_),
        f("initial_accumulator_value", initial_accumulator_value_), f("eps", eps_),
        f("master_weights", master_weights_);
  }
};

/// Adagrad (Duchi et al.), as torch.optim.Adagrad: each element's rate divided by the root of its summed squared
/// gradients.
class Adagrad : public Optimizer {
 public:
  /// Adagrad over groups; a group without options gets `defaults`.
  Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults = {});
  /// Adagrad over one group.
  Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {})
      : Adagrad(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
  /// Adagrad with this learning rate and the other options' defaults.
  Adagrad(std::vector<Tensor> params, double lr) : Adagrad(std::move(params), AdagradOptions(lr)) {}
  /// One update of every parameter that has a gradient, each group with its options.
  void step() override;
  /// The default options.
  const AdagradOptions& options() const noexcept { return static_cast<const AdagradOptions&>(defaults()); }
};

}  // namespace locus::optim

LOCUS_API_END
