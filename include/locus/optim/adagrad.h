#pragma once
/// \file adagrad.h
/// torch.optim.Adagrad.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/optim/optimizer.h"

namespace locus::optim {

/// Options of Adagrad (PyTorch's defaults), set by name in any order.
struct AdagradOptions : CommonOptions<AdagradOptions> {
  /// The learning rate, positionally.
  AdagradOptions(double lr = 0.01) : CommonOptions(lr) {}  // NOLINT: implicit, `Adagrad(params, 0.1)`
  /// The learning rate decays as lr / (1 + (step - 1) * lr_decay).
  LOCUS_ARG(double, lr_decay) = 0;
  /// The starting value of the sum of squared gradients.
  LOCUS_ARG(double, initial_accumulator_value) = 0;
  /// Added to the denominator for stability.
  LOCUS_ARG(double, eps) = 1e-10;

 public:
  /// Calls f(name, member) for every option (OptimizerCloneableOptions).
  template <typename F>
  void for_each_option(F&& f) {
    CommonOptions::for_each_option(f);
    f("lr_decay", lr_decay_), f("initial_accumulator_value", initial_accumulator_value_), f("eps", eps_);
  }
};

/// Adagrad (Duchi et al.), as torch.optim.Adagrad: each element's rate divided by the root of
/// its summed squared gradients.
class Adagrad : public OptimizerFor<Adagrad, AdagradOptions> {
  LOCUS_OPTIMIZER_HOOKS(AdagradOptions);
};

}  // namespace locus::optim

LOCUS_API_END
