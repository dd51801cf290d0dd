#pragma once
/// \file nadam.h
/// torch.optim.NAdam.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/optim/optimizer.h"

namespace locus::optim {

/// Options of NAdam (PyTorch's defaults), set by name in any order.
struct NAdamOptions : AdamFamilyOptions<NAdamOptions> {
  /// The learning rate, positionally.
  NAdamOptions(double lr = 2e-3) : AdamFamilyOptions(lr) {}  // NOLINT: implicit, `NAdam(params, 0.1)`
  /// The momentum schedule's decay (psi).
  LOCUS_ARG(double, momentum_decay) = 4e-3;

 public:
  /// Calls f(name, member) for every option (OptimizerCloneableOptions).
  template <typename F>
  void for_each_option(F&& f) {
    AdamFamilyOptions::for_each_option(f);
    f("momentum_decay", momentum_decay_);
  }
};

/// NAdam (Adam with Nesterov momentum, Dozat), as torch.optim.NAdam.
class NAdam : public OptimizerFor<NAdam, NAdamOptions> {
  LOCUS_OPTIMIZER_HOOKS(NAdamOptions);
};

}  // namespace locus::optim

LOCUS_API_END
